#include "trnsim/kernels/activation.h"

#include <cmath>

#include "trnsim/kernels/row_kernel.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::kernels {

void activation(KernelBuilder& kb, const Tensor& x, const Tensor& y, ActFunc f, int64_t chunk) {
  const auto [rows, cols] = matrix_shape(x, "activation", "x");
  require_same_shape(x, y, "activation");
  const int64_t dsz = x.ap().element_bytes();
  // Transfers want >= 4 KiB per partition; past 8K elements a bigger chunk buys nothing.
  const int64_t w = chunk > 0 ? std::min(chunk, cols) : chunk_width(cols, 3 * 2 * dsz, sbuf_budget(kb), 8192);
  TileRing xr(kb, Space::SBUF, {128, w}, x.dtype(), 3, "activation.x");
  TileRing yr(kb, Space::SBUF, {128, w}, x.dtype(), 3, "activation.y");
  for (const Span& rt : split(rows, 128)) {
    for (const Span& c : split(cols, w)) {
      View xt = corner(xr.next(), rt.size, c.size);
      kb.load(xt, x.slice({rt.range(), c.range()}));
      View yt = corner(yr.next(), rt.size, c.size);
      kb.activation(yt, xt, f);
      kb.store(y.slice({rt.range(), c.range()}), yt);
    }
  }
}

double act_reference(ActFunc f, double x) {
  switch (f) {
    case ActFunc::Copy: return x;
    case ActFunc::Exp: return std::exp(x);
    case ActFunc::Log: return std::log(x);
    case ActFunc::Tanh: return std::tanh(x);
    case ActFunc::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case ActFunc::Relu: return x > 0 ? x : 0.0;
    case ActFunc::Gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ActFunc::GeluTanh: return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case ActFunc::Silu: return x / (1.0 + std::exp(-x));
    case ActFunc::Softplus: return std::log1p(std::exp(x));
    case ActFunc::Rsqrt: return 1.0 / std::sqrt(x);
    case ActFunc::Sqrt: return std::sqrt(x);
    case ActFunc::Square: return x * x;
    case ActFunc::Reciprocal: return 1.0 / x;
    case ActFunc::Abs: return std::fabs(x);
    case ActFunc::Sign: return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    case ActFunc::Sin: return std::sin(x);
    case ActFunc::Cos: return std::cos(x);
    case ActFunc::Erf: return std::erf(x);
    case ActFunc::kCount: break;
  }
  throw UnsupportedError("act_reference: no such function");
}

namespace {
ActFunc func_of(const KernelArgs& a) {
  for (int i = 0; i < static_cast<int>(ActFunc::kCount); ++i)
    if (isa::act_name(static_cast<ActFunc>(i)) == a.choice("func")) return static_cast<ActFunc>(i);
  throw UnsupportedError(fmt::format("activation: no function '{}'", a.choice("func")));
}
bool positive_domain(ActFunc f) {
  return f == ActFunc::Log || f == ActFunc::Sqrt || f == ActFunc::Rsqrt || f == ActFunc::Reciprocal;
}
}  // namespace

KernelDef activation_def() {
  KernelDef k;
  k.name = "activation";
  k.description = "element-wise y = f(x) on ScalarE for any activation function (--func)";
  KernelParam func{"func", "the function", KernelParam::Kind::Choice, 0, 0, 0, {"gelu"}};
  for (int i = 0; i < static_cast<int>(ActFunc::kCount); ++i) {
    auto n = std::string(isa::act_name(static_cast<ActFunc>(i)));
    if (n != "gelu") func.choices.push_back(n);
  }
  k.params = {rows_param(), cols_param(), func, chunk_param()};
  k.dtypes = {DType::BF16, DType::F32};
  k.build = [](const hw::ChipSpec& chip, const KernelArgs& a) {
    KernelBuilder kb(chip);
    kb.set_name(fmt::format("activation_{}_{}x{}_{}", a.choice("func"), a.i("rows"), a.i("cols"),
                            numerics::name(a.dtype)));
    auto x = kb.hbm_input("x", {a.i("rows"), a.i("cols")}, a.dtype);
    auto y = kb.hbm_output("y", {a.i("rows"), a.i("cols")}, a.dtype);
    activation(kb, x, y, func_of(a), a.i("chunk"));
    return kb.build();
  };
  k.reference = [](const KernelArgs& a, const Tensors& in) {
    const ActFunc f = func_of(a);
    const auto& x = in.at("x");
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = act_reference(f, x[i]);
    return ReferenceOutputs{{"y", std::move(y)}};
  };
  // ScalarE evaluates in fp32 (a few ulp); bf16 rounds the output (2^-9 relative).
  k.tolerance = [](const KernelArgs& a) {
    return a.dtype == DType::F32 ? Tolerance{1e-6, 1e-5} : Tolerance{1e-3, 1e-2};
  };
  k.input_range = [](const KernelArgs& a, const std::string&) {
    return positive_domain(func_of(a)) ? std::pair{0.125, 4.0} : std::pair{-4.0, 4.0};
  };
  return k;
}

}  // namespace trnsim::kernels
