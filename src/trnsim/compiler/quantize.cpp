#include "trnsim/compiler/quantize.h"

#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/error.h"
#include "trnsim/compiler/graph_edit.h"
#include "trnsim/compiler/host_eval.h"
#include "trnsim/compiler/initialiser.h"
#include "trnsim/compiler/quant_values.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

namespace {

constexpr std::pair<QuantFormat, std::string_view> kFormats[] = {
    {QuantFormat::FP16, "fp16"}, {QuantFormat::BF16, "bf16"}, {QuantFormat::FP8, "fp8"},
    {QuantFormat::INT8, "int8"}, {QuantFormat::MXFP8, "mxfp8"}, {QuantFormat::MXFP4, "mxfp4"}};

bool is_mx(QuantFormat f) { return f == QuantFormat::MXFP8 || f == QuantFormat::MXFP4; }
bool is_scaled(QuantFormat f) { return f == QuantFormat::INT8 || f == QuantFormat::FP8; }

ElemType code_type(QuantFormat f) {
  switch (f) {
    case QuantFormat::FP16: return ElemType::Float16;
    case QuantFormat::BF16: return ElemType::BFloat16;
    case QuantFormat::FP8:
    case QuantFormat::MXFP8: return ElemType::Float8E4M3FN;
    case QuantFormat::INT8: return ElemType::Int8;
    case QuantFormat::MXFP4: return ElemType::Float4E2M1;
    case QuantFormat::None: break;
  }
  return ElemType::Float;
}

bool float_const(const Graph& g, const std::string& t) {
  if (t.empty() || !g.is_const(t)) return false;
  const ElemType e = g.tensor(t).type;
  return e == ElemType::Float || e == ElemType::Double || e == ElemType::Float16 || e == ElemType::BFloat16;
}

// A MatMul by a constant 2-D weight [K, N] (on the right) of a run-time input.
bool weight_matmul(const Graph& g, const Node& n) {
  return n.op == OpKind::MatMul && float_const(g, n.inputs[1]) && !g.is_const(n.inputs[0]) && g.tensor(n.inputs[1]).shape.size() == 2;
}

// An implicit-GEMM convolution (Conv's decomposition) by a constant weight [taps x C/group, M]:
// the contraction runs down its rows (kernel taps x input channels), the output channels along
// its columns, as a MatMul weight's K and N. Grouped (depthwise) convs keep their weights.
bool weight_conv(const Graph& g, const Node& n) {
  return n.op == OpKind::ConvGemm && n.i("group", 1) == 1 && float_const(g, n.inputs[1]) && !g.is_const(n.inputs[0]) &&
         g.tensor(n.inputs[1]).shape.size() == 2;
}

// A Gather of rows of a constant 2-D table by run-time indices (an embedding lookup).
bool table_gather(const Graph& g, const Node& n) {
  return n.op == OpKind::Gather && float_const(g, n.inputs[0]) && !g.is_const(n.inputs[1]) && g.tensor(n.inputs[0]).shape.size() == 2 &&
         n.i("axis", 0) == 0;
}

struct Rewriter {
  Graph& g;
  const QuantizeOptions& o;
  GraphEditor e;
  QuantizeSummary sum;
  std::map<std::string, std::pair<std::string, std::string>> done;  // weight + role -> codes, scales

  bool mx_on_chip;  // false: MX weights become their dequantised values in bf16 (a warning)

  Rewriter(Graph& gr, const QuantizeOptions& op, bool mx) : g(gr), o(op), e(gr), mx_on_chip(mx) {}

  std::string scalar(const std::string& base, double v) { return e.constant(base, {}, {v}); }

  // Codes (and scales) of a weight in one role: "k" (MatMul: MX blocks down K, scales per
  // column) or "row" (table: MX blocks along a row, scales per row), shared by its uses.
  std::pair<std::string, std::string> codes(const std::string& w, bool matmul) {
    const std::string key = w + (matmul ? "/k" : "/row");
    if (auto it = done.find(key); it != done.end()) return it->second;
    const Shape s = g.tensor(w).shape;
    const auto& v = const_values(g, w);
    const ElemType ct = code_type(o.format);
    std::pair<std::string, std::string> r;
    if (is_mx(o.format) && !mx_on_chip) {  // the MX values as bf16 weights (exact): no MX on chip
      QuantValues q = quantize_mx(v, s[0], s[1], ct, matmul ? 0 : 1);
      const auto cols = static_cast<size_t>(s[1]);
      for (size_t i = 0; i < q.codes.size(); ++i) {
        const size_t row = i / cols, col = i % cols;
        q.codes[i] *= q.scales[matmul ? row / 32 * cols + col : row * (cols / 32) + col / 32];
      }
      r.first = e.constant(w + ".mx_values", s, std::move(q.codes), ElemType::BFloat16);
    } else if (is_mx(o.format)) {
      QuantValues q = quantize_mx(v, s[0], s[1], ct, matmul ? 0 : 1);
      r.first = e.constant(w + ".mx", s, std::move(q.codes), ct);
      r.second = e.constant(w + ".mx_scale", matmul ? Shape{s[0] / 32, s[1]} : Shape{s[0], s[1] / 32}, std::move(q.scales), q.scale_type);
    } else if (is_scaled(o.format)) {
      QuantValues q = quantize_scaled(v, s[0], s[1], ct, o.per_channel ? (matmul ? 1 : 0) : -1);
      r.first = e.constant(w + ".q", s, std::move(q.codes), ct);
      const Shape ss = !o.per_channel ? Shape{} : matmul ? Shape{s[1]} : Shape{s[0], 1};
      r.second = e.constant(w + ".scale", ss, std::move(q.scales));
    } else {
      std::vector<double> h(v.size());
      std::transform(v.begin(), v.end(), h.begin(), [&](double x) { return round_to(ct, x); });
      r.first = e.constant(w + "." + std::string(quant_format_name(o.format)), s, std::move(h), ct);
    }
    ++sum.weights;
    return done[key] = r;
  }

  // The MatMul input quantised with its calibrated per-tensor range; returns (input, scale).
  std::pair<std::string, double> activation(const Node& n) {
    const std::string& a = n.inputs[0];
    auto it = o.ranges.find(a);
    if (it == o.ranges.end()) throw Error(fmt::format("quantize: no calibrated range for '{}' (input of '{}')", a, n.name));
    const double qmax = o.format == QuantFormat::INT8 ? 127.0 : 448.0;
    const double s = it->second > 0 ? static_cast<float>(it->second / qmax) : 1.0;
    ++sum.activations;
    std::string x = e.add(OpKind::Mul, n.name + ".quantize_input", {a, scalar("inv_scale", 1.0 / s)});
    if (o.format == QuantFormat::INT8) {
      x = e.add(OpKind::Round, n.name + ".quantize_input.round", {x});
      x = e.add(OpKind::Max, n.name + ".quantize_input.clip", {x, scalar("qmin", -127.0)});
      x = e.add(OpKind::Min, n.name + ".quantize_input.clip", {x, scalar("qmax", 127.0)});
    } else {
      x = e.add(OpKind::Cast, n.name + ".quantize_input.cast", {x}, {{"to", int64_t{17}}});
    }
    return {x, s};
  }

  // The codes and scales of a MatMul's or conv's weight (input 1, [K, N]); false when the node
  // is already done: kept (MX with K not a multiple of 32) or reading fp16/bf16 values.
  bool weight_codes(const Node& n, std::pair<std::string, std::string>& cs) {
    const Shape ws = g.tensor(n.inputs[1]).shape;
    if (is_mx(o.format) && ws[0] % 32 != 0) { ++sum.skipped; e.nodes().push_back(n); return false; }
    cs = codes(n.inputs[1], true);
    if (is_scaled(o.format) || (is_mx(o.format) && mx_on_chip)) return true;
    Node m = n;
    m.inputs[1] = cs.first;
    e.nodes().push_back(m);
    return false;
  }

  // An MX weight [K, N] dequantised on chip to bf16 (exact): codes x scale per 32 along K.
  std::string mx_dequantized(const Node& n, const std::string& c, const std::string& sc, const Shape& ws) {
    const std::string c3 = e.add(OpKind::Reshape, n.name + ".mx_codes", {c, e.ints("shape", {ws[0] / 32, 32, ws[1]})});
    const std::string s3 = e.add(OpKind::Reshape, n.name + ".mx_scales", {sc, e.ints("shape", {ws[0] / 32, 1, ws[1]})});
    const std::string d = e.add(OpKind::Mul, n.name + ".mx_dequantize", {c3, s3});
    g.tensor(d).type = ElemType::BFloat16;
    return e.add(OpKind::Reshape, n.name + ".mx_weight", {d, e.ints("shape", ws)});
  }

  void matmul(const Node& n) {
    std::pair<std::string, std::string> cs;
    if (!weight_codes(n, cs)) return;
    const auto& [c, sc] = cs;
    const ElemType out_type = g.tensor(n.outputs[0]).type;
    // MX (lower_mx_matmul.h): with MX activations on TensorE's MX path; weights only, the
    // weight dequantised once per block load into the operand dtype (weight-stationary).
    if (is_mx(o.format)) {
      const QuantFormat x = o.mx_activations;
      e.add(OpKind::MatMulMx, n.name, {n.inputs[0], c, sc}, {{"mx_activations", std::string(quant_format_name(x))}}, n.outputs[0]);
      g.tensor(n.outputs[0]).type = out_type;
      sum.activations += x != QuantFormat::None;
      return;
    }
    std::string a = n.inputs[0], scale = sc;
    if (o.activations) {
      double as = 1;
      std::tie(a, as) = activation(n);
      std::vector<double> v = const_values(g, sc);
      for (auto& x : v) x = static_cast<float>(x * as);
      scale = e.constant(sc + ".with_input", g.tensor(sc).shape, std::move(v));
    }
    const std::string y = e.add(OpKind::MatMul, n.name, {a, c}, n.attrs);
    g.tensor(y).type = out_type;
    e.add(OpKind::Mul, n.name + ".dequantize", {y, scale}, {}, n.outputs[0]);
    g.tensor(n.outputs[0]).type = out_type;
  }

  // Conv weights, weight-only: int8/fp8 codes per output channel (or tensor) with the scale as
  // a Mul after the conv and the bias after that (both fused epilogues); fp16/bf16 as they are;
  // MX blocks of 32 down the contraction, dequantised to bf16 on chip (the conv kernel has no
  // MX path).
  void conv(const Node& n) {
    const Shape ws = g.tensor(n.inputs[1]).shape;
    std::pair<std::string, std::string> cs;
    if (!weight_codes(n, cs)) return;
    const auto& [c, sc] = cs;
    const ElemType out_type = g.tensor(n.outputs[0]).type;
    if (is_mx(o.format)) {
      Node m = n;
      m.inputs[1] = mx_dequantized(n, c, sc, ws);
      e.nodes().push_back(m);
      return;
    }
    // Scale and bias as [C_out, 1, 1] operands made before the conv, so the fusion pass can
    // take both as its epilogue.
    const Shape per_channel{ws[1], 1, 1};
    const std::string s = o.per_channel ? e.constant(sc + ".conv", per_channel, const_values(g, sc)) : sc;
    const bool bias = n.inputs.size() > 2 && !n.inputs[2].empty();
    std::string b;
    if (bias)
      b = g.is_const(n.inputs[2]) ? e.constant(n.inputs[2] + ".conv", per_channel, const_values(g, n.inputs[2]))
                                  : e.add(OpKind::Reshape, n.name + ".bias", {n.inputs[2], e.ints("shape", per_channel)});
    const std::string y = e.add(OpKind::ConvGemm, n.name, {n.inputs[0], c}, n.attrs);
    g.tensor(y).type = out_type;
    const std::string d = e.add(OpKind::Mul, n.name + ".dequantize", {y, s}, {}, bias ? "" : n.outputs[0]);
    g.tensor(d).type = out_type;
    if (!bias) return;
    e.add(OpKind::Add, n.name + ".bias_add", {d, b}, {}, n.outputs[0]);
    g.tensor(n.outputs[0]).type = out_type;
  }

  void gather(const Node& n) {
    const std::string& w = n.inputs[0];
    const Shape ws = g.tensor(w).shape;
    if (is_mx(o.format) && ws[1] % 32 != 0) { ++sum.skipped; e.nodes().push_back(n); return; }
    const auto [c, sc] = codes(w, false);
    const std::string& idx = n.inputs[1];
    const std::string& out = n.outputs[0];
    const ElemType out_type = g.tensor(out).type;
    if (!is_scaled(o.format) && !(is_mx(o.format) && mx_on_chip)) {  // the table in fp16/bf16, rows gathered as fp32
      Node m = n;
      m.inputs[0] = c;
      e.nodes().push_back(m);
      return;
    }
    std::string rows = e.add(OpKind::Gather, n.name, {c, idx}, n.attrs);
    g.tensor(rows).type = ElemType::Float;
    if (is_scaled(o.format)) {
      std::string s = sc;
      if (o.per_channel) {
        s = e.add(OpKind::Gather, n.name + ".row_scales", {sc, idx}, n.attrs);
      }
      e.add(OpKind::Mul, n.name + ".dequantize", {rows, s}, {}, out);
      g.tensor(out).type = out_type;
      return;
    }
    Shape lead = g.tensor(idx).shape;
    auto with = [&](int64_t a, int64_t b) { Shape s = lead; s.push_back(a); if (b) s.push_back(b); return s; };
    std::string s = e.add(OpKind::Gather, n.name + ".mx_scales", {sc, idx}, n.attrs);
    g.tensor(s).type = ElemType::Float;
    rows = e.add(OpKind::Reshape, n.name + ".mx_blocks", {rows, e.ints("shape", with(ws[1] / 32, 32))});
    s = e.add(OpKind::Reshape, n.name + ".mx_block_scales", {s, e.ints("shape", with(ws[1] / 32, 1))});
    const std::string d = e.add(OpKind::Mul, n.name + ".mx_dequantize", {rows, s});
    e.add(OpKind::Reshape, n.name + ".mx_rows", {d, e.ints("shape", with(ws[1], 0))}, {}, out);
    g.tensor(out).type = out_type;
  }
};

}  // namespace

QuantFormat parse_quant_format(std::string_view s) {
  for (const auto& [f, name] : kFormats)
    if (s == name) return f;
  throw UnsupportedError(fmt::format("unsupported: --quantize {} (expected fp16, bf16, fp8, int8, mxfp8 or mxfp4)", s));
}

void apply_activations_option(QuantizeOptions& o, std::string_view value) {
  if (value.empty() || value == "on") {
    o.activations = true;
    return;
  }
  const QuantFormat f = parse_quant_format(value);
  if (!is_mx(f))
    throw UnsupportedError(fmt::format("unsupported: --activations {} (give mxfp8 or mxfp4 for MX weights; for int8/fp8 weights "
                                       "--activations takes no value)", value));
  o.mx_activations = f;
}

std::string_view quant_format_name(QuantFormat f) {
  for (const auto& [k, name] : kFormats)
    if (k == f) return name;
  return "none";
}

bool mx_on_chip(const QuantizeOptions& o, const hw::ChipSpec& chip) {
  const numerics::DType t = o.format == QuantFormat::MXFP4 ? numerics::DType::MXFP4 : numerics::DType::MXFP8E4M3;
  return chip.supports(t);
}

std::vector<std::string> quantize_warnings(const QuantizeOptions& o, const hw::ChipSpec& chip) {
  if (!is_mx(o.format) || o.calibrate || mx_on_chip(o, chip)) return {};
  return {fmt::format("--quantize {} on {}: {} has no MX formats; the weights are dequantised at conversion and stored as bf16 "
                      "(the MX-rounded values, 16 bits each), matmuls run in the policy's dtype",
                      quant_format_name(o.format), chip.name, chip.display_name.empty() ? chip.name : chip.display_name)};
}

void check_quantize_options(const QuantizeOptions& o, const hw::ChipSpec& chip, DTypePolicy policy) {
  if (o.format == QuantFormat::INT8 && policy == DTypePolicy::FP8)
    throw UnsupportedError("unsupported: --quantize int8 with --dtype fp8 (int8 codes are not exact in fp8 matmul operands; use --dtype bf16 or fp32)");
  if (is_mx(o.format) && o.mx_activations != QuantFormat::None && !mx_on_chip(o, chip))
    throw UnsupportedError(fmt::format("unsupported: --quantize {} --activations {} on {} ({} has no MX matmul; Trainium3 has, e.g. "
                                       "--chip trn3; without --activations the MX weights are dequantised at conversion)",
                                       quant_format_name(o.format), quant_format_name(o.mx_activations), chip.name,
                                       chip.display_name.empty() ? chip.name : chip.display_name));
  if (o.mx_activations != QuantFormat::None && !is_mx(o.format))
    throw UnsupportedError(fmt::format("unsupported: --activations {} with --quantize {} (MX activations go with MX weights: "
                                       "--quantize mxfp8 or mxfp4 on trn3)", quant_format_name(o.mx_activations), quant_format_name(o.format)));
  if (o.activations && is_mx(o.format))
    throw UnsupportedError(fmt::format("unsupported: --activations with --quantize {} needs the MX format of the activations "
                                       "(--activations mxfp8 or --activations mxfp4)", quant_format_name(o.format)));
  if (o.activations && !is_scaled(o.format))
    throw UnsupportedError(fmt::format("unsupported: --activations with --quantize {} (activations are quantised for int8 and fp8; "
                                       "for 16-bit activations use --dtype bf16)", quant_format_name(o.format)));
  if (o.sparse_4_16) {
    if (!chip.core.tensor.sparse_4_16)
      throw UnsupportedError(fmt::format("unsupported: --sparsity 4:16 on {} (its TensorE has no structured-sparse path; Trainium2 and "
                                         "Trainium3 have one)", chip.name));
    if (policy != DTypePolicy::BF16)
      throw UnsupportedError("unsupported: --sparsity 4:16 without --dtype bf16 (TensorE's sparse path takes 16-bit operands)");
  }
}

QuantizeSummary quantize_graph(Graph& g, const QuantizeOptions& o, bool mx_on_chip) {
  if (o.format == QuantFormat::None) return {};
  Rewriter r(g, o, mx_on_chip);
  std::vector<Node> old = std::move(g.nodes);
  g.nodes.clear();
  for (auto& n : old) {
    if (o.calibrate) {  // expose the inputs that would be quantised, change nothing
      if (weight_matmul(g, n) && std::find(r.sum.calibration_tensors.begin(), r.sum.calibration_tensors.end(), n.inputs[0]) == r.sum.calibration_tensors.end()) {
        r.sum.calibration_tensors.push_back(n.inputs[0]);
        const bool io = std::count(g.outputs.begin(), g.outputs.end(), n.inputs[0]) || std::count(g.inputs.begin(), g.inputs.end(), n.inputs[0]);
        if (!io) g.outputs.push_back(n.inputs[0]);
      }
      r.e.nodes().push_back(n);
    } else if (weight_matmul(g, n)) {
      r.matmul(n);
    } else if (table_gather(g, n)) {
      r.gather(n);
    } else if (weight_conv(g, n)) {
      r.conv(n);
    } else {
      r.e.nodes().push_back(n);
    }
  }
  g.nodes = std::move(r.e.nodes());
  return r.sum;
}

QuantizeSummary sparsify_graph(Graph& g) {
  QuantizeSummary sum;
  GraphEditor e(g);
  for (auto& n : g.nodes) {
    if (!weight_matmul(g, n)) continue;
    const Shape ws = g.tensor(n.inputs[1]).shape;
    if (ws[0] % 16 != 0 || ws[0] < 16) { ++sum.skipped; continue; }
    n.inputs[1] = e.constant(n.inputs[1] + ".sparse_4_16", ws, prune_4_16(const_values(g, n.inputs[1]), ws[0], ws[1]), g.tensor(n.inputs[1]).type);
    n.attrs["sparse_4_16"] = int64_t{1};
    ++sum.sparse;
  }
  return sum;
}

}  // namespace trnsim::compiler
