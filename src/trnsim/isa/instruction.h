// The NeuronCore instruction set as typed structs, one per instruction kind, grouped by the
// engine that executes it. Every instruction carries a Sync header: it issues only once each
// semaphore it waits on has reached its value, and on completion it may add 1 to one semaphore.
// Semaphores are the only ordering between engines/queues; within one engine or DMA queue
// instructions run in program order.
#pragma once
#include <cmath>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "trnsim/common/ieee_minmax.h"
#include "trnsim/isa/access_pattern.h"

namespace trnsim::isa {

// The units of a NeuronCore that run an instruction stream.
enum class Engine : uint8_t { Tensor, Vector, Scalar, GpSimd, Dma, kCount };
inline constexpr int kComputeEngines = 4;  // Tensor, Vector, Scalar, GpSimd
std::string_view engine_name(Engine e);    // "TensorE", "VectorE", "ScalarE", "GpSimd", "DMA"

// ---- sync ---------------------------------------------------------------------------------

struct Wait {
  uint32_t semaphore = 0;
  uint32_t value = 0;   // wait until semaphore >= value
};

struct Sync {
  static constexpr int kMaxWaits = 4;
  std::array<Wait, kMaxWaits> waits{};
  uint8_t num_waits = 0;
  int32_t signal = -1;  // semaphore incremented by 1 on completion; -1: none
  void add_wait(uint32_t sem, uint32_t value);  // merges waits on the same semaphore (max)
};

// ---- operator tables (names in isa/ops.cpp; a static_assert checks each table covers its enum)

enum class AluOp : uint8_t {
  Bypass,  // result = first operand
  Add, Sub, Mul, Div, Max, Min, Pow, Mod,
  AbsMax,  // max(|a|, |b|)
  IsEqual, NotEqual, IsGt, IsGe, IsLt, IsLe,  // 1.0 / 0.0
  LogicalAnd, LogicalOr,
  kCount
};
std::string_view alu_name(AluOp op);
// Inline so that engine loops over a tile specialise on the op (unswitch and vectorise)
// instead of calling through the PLT once per element.
inline float alu_apply(AluOp op, float a, float b) {
  switch (op) {
    case AluOp::Bypass: return a;
    case AluOp::Add: return a + b;
    case AluOp::Sub: return a - b;
    case AluOp::Mul: return a * b;
    case AluOp::Div: return a / b;
    case AluOp::Max: return ieee_maximum(a, b);  // NaN propagates (ONNX, IEEE 754-2019)
    case AluOp::Min: return ieee_minimum(a, b);
    case AluOp::Pow: return std::pow(a, b);
    case AluOp::Mod: return std::fmod(a, b);
    case AluOp::AbsMax: return std::fmax(std::fabs(a), std::fabs(b));
    case AluOp::IsEqual: return a == b ? 1.0f : 0.0f;
    case AluOp::NotEqual: return a != b ? 1.0f : 0.0f;
    case AluOp::IsGt: return a > b ? 1.0f : 0.0f;
    case AluOp::IsGe: return a >= b ? 1.0f : 0.0f;
    case AluOp::IsLt: return a < b ? 1.0f : 0.0f;
    case AluOp::IsLe: return a <= b ? 1.0f : 0.0f;
    case AluOp::LogicalAnd: return (a != 0 && b != 0) ? 1.0f : 0.0f;
    case AluOp::LogicalOr: return (a != 0 || b != 0) ? 1.0f : 0.0f;
    case AluOp::kCount: break;
  }
  return a;
}

float alu_identity(AluOp op);  // reduction start value (Add 0, Max -inf, Min +inf, Mul 1, ...)

enum class ActFunc : uint8_t {
  Copy,  // identity
  Exp, Log, Tanh, Sigmoid, Relu, Gelu /* erf form */, GeluTanh, Silu, Softplus,
  Rsqrt, Sqrt, Square, Reciprocal, Abs, Sign, Sin, Cos, Erf,
  kCount
};
std::string_view act_name(ActFunc f);
float act_apply(ActFunc f, float x);

// A per-partition scalar operand: an immediate, or one element per partition ([P, 1] tile).
struct ScalarOperand {
  bool is_tensor = false;
  float imm = 0.0f;
  AccessPattern ap{};  // used when is_tensor
  static ScalarOperand immediate(float v) { return {false, v, {}}; }
  static ScalarOperand tensor(const AccessPattern& a) { return {true, 0.0f, a}; }
};

// ---- TensorE --------------------------------------------------------------------------------

// out[M, N] (PSUM, fp32) (+)= stationary[K, M]^T @ moving[K, N]; K on the partition axis.
// start: zero the accumulator first; stop: the accumulation group ends (result readable).
struct Matmul {
  AccessPattern out, stationary, moving;
  bool start = true;
  bool stop = true;
  bool sparse_stationary = false;  // 4:16 structured sparse along K (chips with sparse_4_16)
};

// The MX block format whose elements are `element` (fp8_e4m3 -> mxfp8_e4m3, fp8_e5m2 ->
// mxfp8_e5m2, fp4_e2m1 -> mxfp4); nullopt for any other dtype.
std::optional<numerics::DType> mx_block_dtype(numerics::DType element);

// OCP MX matmul (chips whose TensorE takes MX operands: Trainium3). Both operands are MX
// block-scaled along K (the partition axis): element codes (fp8_e4m3, fp8_e5m2 or fp4_e2m1,
// one per byte in the tile) and an E8M0 scale tile with one scale per 32 partitions of each
// column: stationary_scale [ceil(K/32), M], moving_scale [ceil(K/32), N]. The value of
// stationary[k, m] is its element times stationary_scale[k / 32, m] (likewise moving);
// out (PSUM, fp32) (+)= the scaled stationary^T @ the scaled moving.
struct MatmulMx {
  AccessPattern out, stationary, moving, stationary_scale, moving_scale;
  bool start = true;
  bool stop = true;
};

// out[F, P] (PSUM) = in[P, F]^T, via the PE array (an identity matmul).
struct Transpose {
  AccessPattern out, in;
};

// ---- VectorE --------------------------------------------------------------------------------

struct TensorTensor {  // out = op(in0, in1), element-wise, same shapes
  AccessPattern out, in0, in1;
  AluOp op = AluOp::Add;
};

struct TensorScalar {  // out = op1(op0(in, s0), s1)
  AccessPattern out, in;
  AluOp op0 = AluOp::Mul;
  ScalarOperand s0 = ScalarOperand::immediate(1.0f);
  AluOp op1 = AluOp::Bypass;
  ScalarOperand s1 = ScalarOperand::immediate(0.0f);
  bool reverse0 = false;  // op0(s0, in) instead of op0(in, s0)
};

// Reduce the innermost `axes` free dims of in with op; out holds the remaining dims
// (or [P, 1] when all are reduced).
struct TensorReduce {
  AccessPattern out, in;
  AluOp op = AluOp::Add;
  uint8_t axes = 1;
  bool negate = false;
};

struct TensorCopy {  // out = in, converting dtype (copy / cast), any space to SBUF/PSUM
  AccessPattern out, in;
};

struct Select {  // out = pred != 0 ? on_true : on_false
  AccessPattern out, pred, on_true, on_false;
};

// Batch-norm statistics of each partition's free elements: out [P, 3] = (count, mean, var).
struct BnStats {
  AccessPattern out, in;
};

// Combine k BnStats triples per partition (in [P, 3k]) into out [P, 2] = (mean, var).
struct BnAggr {
  AccessPattern out, in;
};

// QuantizeMX (Trainium3): in [P, F] to OCP MX along the partition axis, the layout MatmulMx
// takes: each column's blocks of 32 partitions share one E8M0 scale (out_scale [ceil(P/32), F],
// floor(log2(amax)) - emax of the element) and out [P, F] holds the element codes (its dtype:
// fp8_e4m3, fp8_e5m2 or fp4_e2m1), rounded to nearest even and saturated (numerics::mx_quantize).
struct QuantizeMx {
  AccessPattern out, out_scale, in;
};

struct Memset {
  AccessPattern out;
  float value = 0.0f;
};

// ---- ScalarE --------------------------------------------------------------------------------

// out = func(in * scale + bias); bias per partition or immediate. If accum is set, also
// accum[p] = sum over the free axis of out[p, :] (after rounding to out's dtype).
struct Activation {
  AccessPattern out, in;
  ActFunc func = ActFunc::Copy;
  ScalarOperand scale = ScalarOperand::immediate(1.0f);
  ScalarOperand bias = ScalarOperand::immediate(0.0f);
  bool has_accum = false;
  AccessPattern accum{};
};

// ---- GpSimd ---------------------------------------------------------------------------------

// out[p, i] = base + partition_multiplier * p + sum_d free_multiplier[d] * i_d
struct Iota {
  AccessPattern out;
  int32_t base = 0;
  int32_t partition_multiplier = 0;
  std::array<int32_t, kMaxFreeDims> free_multiplier{1, 0, 0, 0};
};

// Across partitions: out [1, F] = op over p of in[p, :].
struct PartitionReduce {
  AccessPattern out, in;
  AluOp op = AluOp::Add;
};

// out [P, F] = in [1, F] on every partition.
struct PartitionBroadcast {
  AccessPattern out, in;
};

// Within each partition: out[p, j] = in[p, index[p, j]] (indices stored as integral values).
struct Gather {
  AccessPattern out, in, index;
};

// ---- DMA ----------------------------------------------------------------------------------

// Copy (converting dtype if they differ) between HBM, SBUF and PSUM (PSUM only as source).
// Indirect (a gather, the way an embedding lookup runs on the DMA engines): `index` is an SBUF
// tile of one integral value per destination partition, and src's outermost free dim is the
// row it selects: dst[p, :] = src[0, index[p], ...]. src then spans the whole table (so
// dependencies see every row); an index outside [0, src.dims[0].count) is an error.
struct Dma {
  AccessPattern dst, src;
  bool indirect = false;
  AccessPattern index{};
};
// The source row `row` of an indirect Dma: src without its outermost free dim, moved to that row.
AccessPattern gathered_row(const Dma& d, int64_t row);
// The row an index value selects; throws trnsim::Error naming the partition for a value that
// is not an integer in [0, src.dims[0].count).
int64_t checked_row(const Dma& d, float index_value, int partition);

// Only synchronises (waits, then signals); zero cost beyond the issue overhead.
struct Nop {};

using Op = std::variant<Matmul, Transpose, TensorTensor, TensorScalar, TensorReduce, TensorCopy,
                        Select, BnStats, BnAggr, Memset, Activation, Iota, PartitionReduce,
                        PartitionBroadcast, Gather, Dma, Nop, MatmulMx, QuantizeMx>;

struct Instruction {
  Op op;
  Sync sync;
};

// The instruction's mnemonic ("matmul", "tensor_tensor.add", "activation.exp", "dma", ...).
std::string op_name(const Op& op);
// The engine a kind of instruction belongs to (Nop: any; returns Engine::kCount).
Engine natural_engine(const Op& op);
// Work counts used by stats and the profiler.
double op_flops(const Op& op);     // TensorE: 2*K*M*N; other engines: elements processed
int64_t op_bytes(const Op& op);    // bytes moved (DMA) or read+written (others)
std::string describe(const Instruction& ins);  // one line with operands, for traces/errors

// Every access pattern an instruction reads or writes, in one list that the kernel builder's
// and the program linker's dependency trackers both walk (two lists once drifted apart: the
// linker missed matmul.mx's scale tiles, and a later kernel's prefetch overwrote them).
struct Operands {
  std::vector<const AccessPattern*> reads, writes;
};
Operands operands_of(const Op& op);

}  // namespace trnsim::isa
