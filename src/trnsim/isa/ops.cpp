// Operator tables and per-instruction metadata (names, engines, work counts).
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "trnsim/common/error.h"
#include "trnsim/isa/instruction.h"

namespace trnsim::isa {

namespace {
constexpr std::array<std::string_view, static_cast<int>(AluOp::kCount)> kAluNames = {
    "bypass", "add", "subtract", "multiply", "divide", "max", "min", "pow", "mod", "abs_max",
    "is_equal", "not_equal", "is_gt", "is_ge", "is_lt", "is_le", "logical_and", "logical_or"};
static_assert(kAluNames.size() == static_cast<size_t>(AluOp::kCount));

constexpr std::array<std::string_view, static_cast<int>(ActFunc::kCount)> kActNames = {
    "copy", "exp", "log", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "softplus",
    "rsqrt", "sqrt", "square", "reciprocal", "abs", "sign", "sin", "cos", "erf"};
static_assert(kActNames.size() == static_cast<size_t>(ActFunc::kCount));

constexpr std::array<std::string_view, static_cast<int>(Engine::kCount)> kEngineNames = {
    "TensorE", "VectorE", "ScalarE", "GpSimd", "DMA"};
}  // namespace

std::string_view alu_name(AluOp op) { return kAluNames[static_cast<int>(op)]; }
std::string_view act_name(ActFunc f) { return kActNames[static_cast<int>(f)]; }
std::string_view engine_name(Engine e) { return kEngineNames[static_cast<int>(e)]; }

float alu_identity(AluOp op) {
  switch (op) {
    case AluOp::Add: case AluOp::Sub: case AluOp::LogicalOr: return 0.0f;
    case AluOp::Mul: case AluOp::LogicalAnd: return 1.0f;
    case AluOp::Max: return -std::numeric_limits<float>::infinity();
    case AluOp::Min: return std::numeric_limits<float>::infinity();
    case AluOp::AbsMax: return 0.0f;
    default: return 0.0f;
  }
}

float act_apply(ActFunc f, float x) {
  switch (f) {
    case ActFunc::Copy: return x;
    case ActFunc::Exp: return std::exp(x);
    case ActFunc::Log: return std::log(x);
    case ActFunc::Tanh: return std::tanh(x);
    case ActFunc::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case ActFunc::Relu: return x > 0 || std::isnan(x) ? x : 0.0f;  // NaN propagates (IEEE, ONNX)
    case ActFunc::Gelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case ActFunc::GeluTanh:
      return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case ActFunc::Silu: return x / (1.0f + std::exp(-x));
    case ActFunc::Softplus: return x > 20.0f ? x : std::log1p(std::exp(x));
    case ActFunc::Rsqrt: return 1.0f / std::sqrt(x);
    case ActFunc::Sqrt: return std::sqrt(x);
    case ActFunc::Square: return x * x;
    case ActFunc::Reciprocal: return 1.0f / x;
    case ActFunc::Abs: return std::fabs(x);
    case ActFunc::Sign: return std::isnan(x) ? x : x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f);
    case ActFunc::Sin: return std::sin(x);
    case ActFunc::Cos: return std::cos(x);
    case ActFunc::Erf: return std::erf(x);
    case ActFunc::kCount: break;
  }
  return x;
}

void Sync::add_wait(uint32_t sem, uint32_t value) {
  for (int i = 0; i < num_waits; ++i)
    if (waits[i].semaphore == sem) {
      if (waits[i].value < value) waits[i].value = value;
      return;
    }
  waits.at(num_waits) = {sem, value};  // at(): more than kMaxWaits is a builder bug
  ++num_waits;
}

namespace {
template <class... Ts>
struct overloaded : Ts... { using Ts::operator()...; };
template <class... Ts>
overloaded(Ts...) -> overloaded<Ts...>;
}  // namespace

std::string op_name(const Op& op) {
  return std::visit(overloaded{
      [](const Matmul& m) { return std::string(m.sparse_stationary ? "matmul.sparse" : "matmul"); },
      [](const Transpose&) { return std::string("transpose"); },
      [](const TensorTensor& o) { return fmt::format("tensor_tensor.{}", alu_name(o.op)); },
      [](const TensorScalar& o) { return fmt::format("tensor_scalar.{}", alu_name(o.op0)); },
      [](const TensorReduce& o) { return fmt::format("tensor_reduce.{}", alu_name(o.op)); },
      [](const TensorCopy&) { return std::string("tensor_copy"); },
      [](const Select&) { return std::string("select"); },
      [](const BnStats&) { return std::string("bn_stats"); },
      [](const BnAggr&) { return std::string("bn_aggr"); },
      [](const Memset&) { return std::string("memset"); },
      [](const Activation& o) { return fmt::format("activation.{}", act_name(o.func)); },
      [](const Iota&) { return std::string("iota"); },
      [](const PartitionReduce& o) { return fmt::format("partition_reduce.{}", alu_name(o.op)); },
      [](const PartitionBroadcast&) { return std::string("partition_broadcast"); },
      [](const Gather&) { return std::string("gather"); },
      [](const Dma& o) { return std::string(o.indirect ? "dma.indirect" : "dma"); },
      [](const Nop&) { return std::string("nop"); },
      [](const MatmulMx&) { return std::string("matmul.mx"); },
      [](const QuantizeMx&) { return std::string("quantize_mx"); }}, op);
}

Engine natural_engine(const Op& op) {
  switch (op.index()) {
    case 0: case 1: return Engine::Tensor;                       // Matmul, Transpose
    case 10: return Engine::Scalar;                              // Activation
    case 11: case 12: case 13: case 14: return Engine::GpSimd;   // Iota .. Gather
    case 15: return Engine::Dma;
    case 16: return Engine::kCount;                              // Nop
    case 17: return Engine::Tensor;                              // MatmulMx
    default: return Engine::Vector;
  }
}
static_assert(std::variant_size_v<Op> == 19, "update natural_engine for new ops");

std::optional<DType> mx_block_dtype(DType element) {
  switch (element) {
    case DType::F8E4M3: return DType::MXFP8E4M3;
    case DType::F8E5M2: return DType::MXFP8E5M2;
    case DType::F4E2M1: return DType::MXFP4;
    default: return std::nullopt;
  }
}

double op_flops(const Op& op) {
  if (auto* m = std::get_if<Matmul>(&op))
    return 2.0 * m->moving.partitions * m->stationary.free_size() * m->moving.free_size();
  if (auto* m = std::get_if<MatmulMx>(&op))
    return 2.0 * m->moving.partitions * m->stationary.free_size() * m->moving.free_size();
  if (auto* t = std::get_if<Transpose>(&op)) return 2.0 * t->in.partitions * t->in.elements();
  if (std::holds_alternative<Dma>(op) || std::holds_alternative<Nop>(op)) return 0;
  return std::visit([](const auto& o) -> double {
    if constexpr (requires { o.in; }) return static_cast<double>(o.in.elements());
    else if constexpr (requires { o.out; }) return static_cast<double>(o.out.elements());
    else return 0.0;
  }, op);
}

int64_t op_bytes(const Op& op) {
  if (auto* d = std::get_if<Dma>(&op)) return d->dst.bytes();
  return std::visit([](const auto& o) -> int64_t {
    int64_t b = 0;
    if constexpr (requires { o.out; }) b += o.out.bytes();
    if constexpr (requires { o.in; }) b += o.in.bytes();
    if constexpr (requires { o.in0; }) b += o.in0.bytes() + o.in1.bytes();
    if constexpr (requires { o.stationary; }) b += o.stationary.bytes() + o.moving.bytes();
    if constexpr (requires { o.stationary_scale; }) b += o.stationary_scale.bytes() + o.moving_scale.bytes();
    if constexpr (requires { o.out_scale; }) b += o.out_scale.bytes();
    return b;
  }, op);
}

AccessPattern gathered_row(const Dma& d, int64_t row) {
  AccessPattern a = d.src;
  a.offset += row * a.dims[0].stride * a.element_bytes();
  for (int i = 1; i < a.ndims; ++i) a.dims[i - 1] = a.dims[i];
  a.dims[a.ndims - 1] = {};
  --a.ndims;
  return a;
}

int64_t checked_row(const Dma& d, float v, int partition) {
  const int64_t rows = d.src.dims[0].count;
  if (!(v >= 0.0f && v < static_cast<float>(rows)) || v != std::floor(v))
    throw Error(fmt::format("dma.indirect: index {} at partition {} is not a row of the {}-row table", v, partition, rows));
  return static_cast<int64_t>(v);
}

Operands operands_of(const Op& op) {
  Operands o;
  std::visit([&](const auto& x) {
    using T = std::decay_t<decltype(x)>;
    if constexpr (requires { x.out; }) o.writes.push_back(&x.out);
    if constexpr (requires { x.dst; }) { o.writes.push_back(&x.dst); o.reads.push_back(&x.src); }
    if constexpr (requires { x.in; }) o.reads.push_back(&x.in);
    if constexpr (requires { x.in0; }) { o.reads.push_back(&x.in0); o.reads.push_back(&x.in1); }
    if constexpr (requires { x.stationary; }) {
      o.reads.push_back(&x.stationary);
      o.reads.push_back(&x.moving);
      if (!x.start) o.reads.push_back(&x.out);
    }
    if constexpr (requires { x.stationary_scale; }) { o.reads.push_back(&x.stationary_scale); o.reads.push_back(&x.moving_scale); }
    if constexpr (requires { x.out_scale; }) o.writes.push_back(&x.out_scale);
    if constexpr (std::is_same_v<T, Select>) {
      o.reads.push_back(&x.pred); o.reads.push_back(&x.on_true); o.reads.push_back(&x.on_false);
    }
    if constexpr (std::is_same_v<T, Gather>) o.reads.push_back(&x.index);
    if constexpr (std::is_same_v<T, Dma>) if (x.indirect) o.reads.push_back(&x.index);
    if constexpr (requires { x.s0; }) {
      if (x.s0.is_tensor) o.reads.push_back(&x.s0.ap);
      if (x.s1.is_tensor) o.reads.push_back(&x.s1.ap);
    }
    if constexpr (std::is_same_v<T, Activation>) {
      if (x.scale.is_tensor) o.reads.push_back(&x.scale.ap);
      if (x.bias.is_tensor) o.reads.push_back(&x.bias.ap);
      if (x.has_accum) o.writes.push_back(&x.accum);
    }
  }, op);
  return o;
}

std::string describe(const Instruction& ins) {
  std::string s = op_name(ins.op);
  std::visit([&](const auto& o) {
    if constexpr (requires { o.out; }) s += " out=" + o.out.to_string();
    if constexpr (requires { o.dst; }) {
      s += " dst=" + o.dst.to_string() + " src=" + o.src.to_string();
      if (o.indirect) s += " index=" + o.index.to_string();
    }
    if constexpr (requires { o.stationary; })
      s += " stationary=" + o.stationary.to_string() + " moving=" + o.moving.to_string();
    if constexpr (requires { o.stationary_scale; })
      s += " stationary_scale=" + o.stationary_scale.to_string() + " moving_scale=" + o.moving_scale.to_string();
    if constexpr (requires { o.out_scale; }) s += " out_scale=" + o.out_scale.to_string();
    if constexpr (requires { o.in; }) s += " in=" + o.in.to_string();
    if constexpr (requires { o.in0; }) s += " in0=" + o.in0.to_string() + " in1=" + o.in1.to_string();
  }, ins.op);
  for (int i = 0; i < ins.sync.num_waits; ++i)
    s += fmt::format(" wait(s{}>={})", ins.sync.waits[i].semaphore, ins.sync.waits[i].value);
  if (ins.sync.signal >= 0) s += fmt::format(" signal(s{})", ins.sync.signal);
  return s;
}

}  // namespace trnsim::isa
