#include "trnsim/compiler/lower_elementwise.h"

#include <cmath>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/op_params.h"
#include "trnsim/compiler/shape_util.h"
#include "trnsim/kernels/transpose.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::compiler {

using isa::ActFunc;
using isa::AluOp;
using kernels::Span;
using kernels::TileRing;

namespace {

constexpr int64_t kMaxCols = 2048;      // fp32 columns per tile: 8 KiB of each partition
constexpr int64_t kMaxDmaCols = 8192;   // columns per HBM -> HBM transfer

[[noreturn]] void unsupported(const Node& n, const std::string& why) {
  throw UnsupportedError(fmt::format("unsupported: op {} ({}) at node '{}'", op_name(n.op), why, n.name));
}

std::optional<ActFunc> act_of(OpKind op, const Node& n) {
  switch (op) {
    case OpKind::Exp: return ActFunc::Exp;
    case OpKind::Log: return ActFunc::Log;
    case OpKind::Tanh: return ActFunc::Tanh;
    case OpKind::Sigmoid: return ActFunc::Sigmoid;
    case OpKind::Relu: return ActFunc::Relu;
    case OpKind::Gelu: return n.s("approximate", "none") == "tanh" ? ActFunc::GeluTanh : ActFunc::Gelu;
    case OpKind::Softplus: return ActFunc::Softplus;
    case OpKind::Sqrt: return ActFunc::Sqrt;
    case OpKind::Reciprocal: return ActFunc::Reciprocal;
    case OpKind::Abs: return ActFunc::Abs;
    case OpKind::Sign: return ActFunc::Sign;
    case OpKind::Sin: return ActFunc::Sin;
    case OpKind::Cos: return ActFunc::Cos;
    case OpKind::Erf: return ActFunc::Erf;
    case OpKind::Identity: return ActFunc::Copy;
    default: return std::nullopt;
  }
}

std::optional<AluOp> alu_of(OpKind op) {
  switch (op) {
    case OpKind::Add: return AluOp::Add;
    case OpKind::Sub: return AluOp::Sub;
    case OpKind::Mul: return AluOp::Mul;
    case OpKind::Div: return AluOp::Div;
    case OpKind::Pow: return AluOp::Pow;
    case OpKind::Max: return AluOp::Max;
    case OpKind::Min: return AluOp::Min;
    case OpKind::Mod: return AluOp::Mod;
    case OpKind::Equal: return AluOp::IsEqual;
    case OpKind::Less: return AluOp::IsLt;
    case OpKind::Greater: return AluOp::IsGt;
    case OpKind::LessOrEqual: return AluOp::IsLe;
    case OpKind::GreaterOrEqual: return AluOp::IsGe;
    case OpKind::And: return AluOp::LogicalAnd;
    case OpKind::Or: return AluOp::LogicalOr;
    default: return std::nullopt;
  }
}

// x - fmod(x, 1): truncation toward zero, as an ONNX cast to an integer type does.
void truncate(KernelBuilder& kb, const View& out, const View& in, const View& tmp) {
  kb.tensor_scalar(tmp, in, AluOp::Mod, 1.0f);
  kb.tensor_tensor(out, in, tmp, AluOp::Sub);
}

// The same for a cast to an integer type: NaN and +-inf (where fmod gives NaN) become 0, as
// the host folding's round_to does (ONNX leaves them undefined; an integer tensor holding NaN
// made a uint8 Add give NaN where the folded constant gave 0; fuzz, differential).
void truncate_to_integer(KernelBuilder& kb, const View& out, const View& in, const View& tmp) {
  truncate(kb, out, in, tmp);
  kb.tensor_tensor(tmp, out, out, AluOp::IsEqual);  // 0 where NaN
  kb.select(out, tmp, out, tmp);
}

void round_finite(KernelBuilder& kb, OpKind op, const View& out, const View& x, const View& tmp, const View* t2);

// Floor / Ceil / Round (halves to even) from fmod, exact for every finite float: t = x -
// fmod(x, 1) is x truncated toward zero (exact: both are floats and t is an integer); floor
// steps t down where it lies above x, ceil up where below. `out`, `tmp`, `t2` and `x` are
// distinct tiles (x is only read). Where |x| >= 2^23 (every such float is an integer), +-inf
// (fmod(inf, 1) is NaN) and NaN, the result is x itself.
void round_integral(KernelBuilder& kb, OpKind op, const View& out, const View& x, const View& tmp, const View* t2) {
  round_finite(kb, op, out, x, tmp, t2);
  kb.tensor_scalar(tmp, x, AluOp::AbsMax, 0.0f, AluOp::IsLt, 0x1p23f);  // 0 for NaN too
  kb.select(out, tmp, out, x);
}

void round_finite(KernelBuilder& kb, OpKind op, const View& out, const View& x, const View& tmp, const View* t2) {
  kb.tensor_scalar(tmp, x, AluOp::Mod, 1.0f);
  kb.tensor_tensor(out, x, tmp, AluOp::Sub);  // trunc(x)
  if (op == OpKind::Ceil) {
    kb.tensor_tensor(tmp, out, x, AluOp::IsLt);
    kb.tensor_tensor(out, out, tmp, AluOp::Add);
    return;
  }
  kb.tensor_tensor(tmp, out, x, AluOp::IsGt);
  kb.tensor_tensor(out, out, tmp, AluOp::Sub);  // floor(x)
  if (op != OpKind::Round) return;
  // d = x - floor(x) in [0, 1) (exact). Round up when d > 0.5, or d == 0.5 and floor(x) is odd:
  // (d - 0.5) + 2^-40 * |fmod(floor, 2)| > 0. d - 0.5 is exact and, when not 0, at least 2^-25
  // in magnitude (d's spacing near 0.5), so the 2^-40 only decides the exact tie.
  kb.tensor_tensor(tmp, x, out, AluOp::Sub);
  kb.tensor_scalar(tmp, tmp, AluOp::Sub, 0.5f);
  kb.tensor_scalar(*t2, out, AluOp::Mod, 2.0f, AluOp::AbsMax, 0.0f);
  kb.tensor_scalar(*t2, *t2, AluOp::Mul, 0x1p-40f);
  kb.tensor_tensor(tmp, tmp, *t2, AluOp::Add);
  kb.tensor_scalar(tmp, tmp, AluOp::IsGt, 0.0f);
  kb.tensor_tensor(out, out, tmp, AluOp::Add);
}

ElemType cast_to(const Node& n, const Graph* g) { return g ? g->tensor(n.outputs[0]).type : ElemType::Float; }

}  // namespace

void apply_elementwise(KernelBuilder& kb, const Node& n, OpKind op, const View& out, const View& a,
                       const View* b, const View* c, const View& tmp, bool integral) {
  if (auto f = act_of(op, n)) {
    kb.activation(out, a, *f);
    return;
  }
  if (auto alu = alu_of(op)) {
    if (!b) unsupported(n, "missing operand");
    kb.tensor_tensor(out, a, *b, *alu);
    if (op == OpKind::Mod && n.i("fmod", 0) == 0 && integral) {  // the divisor's sign: r += b where r * b < 0
      kb.tensor_tensor(tmp, out, *b, AluOp::Mul);
      kb.tensor_scalar(tmp, tmp, AluOp::Mul, -1.0f, AluOp::IsGt, 0.0f);
      kb.tensor_tensor(tmp, tmp, *b, AluOp::Mul);
      kb.tensor_tensor(out, out, tmp, AluOp::Add);
    } else if (op == OpKind::Mod && n.i("fmod", 0) == 0) {  // Mod-28 floor mod on floats: a select,
      kb.tensor_tensor(tmp, out, *b, AluOp::Mul);           // as 0 * inf (r = 0, b = inf) is NaN
      kb.tensor_scalar(tmp, tmp, AluOp::IsLt, 0.0f);
      kb.select(tmp, tmp, *b, tmp);  // b where the signs differ, else the mask's 0
      kb.tensor_tensor(out, out, tmp, AluOp::Add);
    }
    if (op == OpKind::Div && integral) truncate(kb, out, out, tmp);
    return;
  }
  switch (op) {
    case OpKind::Neg: kb.tensor_scalar(out, a, AluOp::Mul, -1.0f); return;
    case OpKind::Not: kb.tensor_scalar(out, a, AluOp::IsEqual, 0.0f); return;
    case OpKind::IsNaN: kb.tensor_tensor(out, a, a, AluOp::NotEqual); return;  // NaN != NaN
    case OpKind::LeakyRelu: {
      float alpha = static_cast<float>(n.f("alpha", 0.01));
      kb.tensor_scalar(tmp, a, AluOp::Mul, alpha);
      kb.tensor_tensor(out, a, tmp, alpha <= 1 ? AluOp::Max : AluOp::Min);
      return;
    }
    case OpKind::HardSigmoid:
    case OpKind::HardSwish: {
      bool swish = op == OpKind::HardSwish;
      float alpha = swish ? 1.0f / 6.0f : static_cast<float>(n.f("alpha", 0.2));
      float beta = swish ? 0.5f : static_cast<float>(n.f("beta", 0.5));
      const View& dst = swish ? tmp : out;
      kb.tensor_scalar(dst, a, AluOp::Mul, alpha, AluOp::Add, beta);
      kb.tensor_scalar(dst, dst, AluOp::Max, 0.0f, AluOp::Min, 1.0f);
      if (swish) kb.tensor_tensor(out, a, tmp, AluOp::Mul);
      return;
    }
    case OpKind::Where:
      if (!b || !c) unsupported(n, "missing operand");
      kb.select(out, a, *b, *c);
      return;
    default: break;
  }
  unsupported(n, "no kernel for it at run time");
}

void elementwise_kernel(LowerCtx& ctx, const SView& out, const std::vector<SView>& ins, const TileCompute& compute) {
  std::vector<SView> all{out};
  all.insert(all.end(), ins.begin(), ins.end());
  TilePlan p = plan_tiles(all);
  const int64_t w = std::min(p.cols, kMaxCols);
  auto& kb = ctx.kb;
  // The pieces (outer index, row tile, column range). On several cores (core_split.h) columns
  // are narrowed until every core has a piece; each element's result does not depend on it.
  struct Piece {
    int64_t o;
    Span rs, cs;
  };
  std::vector<Piece> pieces;
  int64_t tiles_n = 0;
  for_each_tile(p, w, [&](int64_t, Span, Span) { ++tiles_n; });
  const int64_t parts = ctx.cores > 1 ? column_parts(tiles_n, w, kMinElementwiseCols, ctx.cores) : 1;
  for_each_tile(p, w, [&](int64_t o, Span rs, Span cs) {
    const int64_t k = std::min(parts, cs.size);
    for (int64_t i = 0; i < k; ++i)
      pieces.push_back({o, rs, {cs.begin + i * cs.size / k, (i + 1) * cs.size / k - i * cs.size / k}});
  });
  for_each_core_share(ctx, static_cast<int64_t>(pieces.size()), [&](int64_t first, int64_t last) {
  std::vector<std::unique_ptr<TileRing>> rings;
  for (size_t i = 0; i < ins.size() + 2; ++i)
    rings.push_back(std::make_unique<TileRing>(kb, isa::Space::SBUF, std::vector<int64_t>{128, w}, DType::F32, 2, ctx.n.name));
  // A scalar constant operand (0.5 in x * 0.5, the fill value of a Where) is set once with a
  // memset: loading it through a stride-0 DMA would move one element per descriptor.
  std::vector<std::optional<kernels::Tile>> filled(ins.size());
  for (size_t i = 0; i < ins.size(); ++i) {
    const auto& t = ctx.g.tensor(ins[i].tensor);
    if (!t.is_const() || t.data->size() != 1) continue;
    const double v = (*t.data)[0];
    // The chip holds it as fp32: an integer past 2^24 would be rounded (16777217 -> 16777216),
    // so it is refused as an input of that size is. +-inf is exact: a rewrite's sentinel (TopK).
    if (is_integral(t.type) && std::isfinite(v) && std::fabs(v) > 16777216.0)
      throw UnsupportedError(fmt::format("unsupported: constant '{}' holds the integer {}, beyond 2^24 (the chip holds it as fp32) at node '{}'",
                                         ins[i].tensor, v, ctx.n.name));
    filled[i] = kb.sbuf_tile({128, w}, DType::F32, ctx.n.name + ".const");
    kb.memset(*filled[i], static_cast<float>(v));
  }
  for (int64_t pi = first; pi < last; ++pi) {
    const int64_t o = pieces[static_cast<size_t>(pi)].o;
    const Span rs = pieces[static_cast<size_t>(pi)].rs, cs = pieces[static_cast<size_t>(pi)].cs;
    std::vector<View> tiles;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (filled[i]) {
        tiles.push_back(kernels::corner(*filled[i], rs.size, cs.size));
        continue;
      }
      if (p.col_stride[i + 1] == 0 && cs.size > 1) {
        // Constant along the row (a per-row scale such as a norm's 1/rms): one element per
        // partition, read back with a zero stride, instead of a DMA of 4-byte runs.
        View one = kernels::corner(rings[i]->next(), rs.size, 1);
        kb.load(one, ctx.view(ins[i], p, i + 1, o, rs, {cs.begin, 1}));
        isa::AccessPattern ap = one.ap();
        ap.ndims = 1;
        ap.dims[0] = {0, static_cast<int32_t>(cs.size)};
        tiles.push_back(View(ap, {rs.size, cs.size}, one.buffer()));
        continue;
      }
      View t = kernels::corner(rings[i]->next(), rs.size, cs.size);
      kb.load(t, ctx.view(ins[i], p, i + 1, o, rs, cs));
      tiles.push_back(t);
    }
    View ot = kernels::corner(rings[ins.size()]->next(), rs.size, cs.size);
    View tmp = kernels::corner(rings[ins.size() + 1]->next(), rs.size, cs.size);
    compute(ot, tiles, tmp);
    kb.store(ctx.view(out, p, 0, o, rs, cs), ot);
  }
  for (auto& f : filled)
    if (f) kb.free(*f);
  });
}

void copy_kernel(LowerCtx& ctx, const SView& out, const SView& in) {
  TilePlan p = plan_tiles({out, in});
  for_each_tile(p, kMaxDmaCols, [&](int64_t o, Span rs, Span cs) {
    ctx.kb.dma(ctx.view(out, p, 0, o, rs, cs), ctx.view(in, p, 1, o, rs, cs));
  });
}

void lower_elementwise(LowerCtx& ctx) {
  const Node& n = ctx.n;
  const Graph& g = ctx.g;
  const Shape& os = g.tensor(n.outputs[0]).shape;
  std::vector<SView> ins;
  // CastLike's second input only names the target type; it is not read.
  const size_t read = n.op == OpKind::CastLike ? 1 : n.inputs.size();
  for (size_t i = 0; i < read; ++i) ins.push_back(broadcast_view(n.inputs[i], g.tensor(n.inputs[i]).shape, os));
  const bool integral = is_integral(g.tensor(n.inputs[0]).type);
  SView out = row_major(n.outputs[0], os);
  if (n.op == OpKind::Cast || n.op == OpKind::CastLike) {
    ElemType to = cast_to(n, &g);
    if (to == ElemType::Float16 || to == ElemType::BFloat16) {
      // Round through a tile of the target type, then back to the fp32 HBM copy.
      kernels::TileRing half(ctx.kb, isa::Space::SBUF, {128, kMaxCols}, to == ElemType::Float16 ? DType::F16 : DType::BF16, 2, n.name);
      elementwise_kernel(ctx, out, {ins[0]}, [&](const View& o, const std::vector<View>& t, const View&) {
        View h = kernels::corner(half.next(), o.partitions(), o.free_size());
        ctx.kb.copy(h, t[0]);
        ctx.kb.copy(o, h);
      });
    } else if (is_narrow_float(to)) {
      // ONNX saturate (default 1, fp8 only): finite overflow and +-Inf clamp to +-max, NaN stays
      // NaN; saturate=0 keeps the format's own rule (E4M3FN: NaN, E5M2: Inf). FP4 always saturates.
      const DType dt = narrow_dtype(to);
      const bool sat = to != ElemType::Float4E2M1 && n.i("saturate", 1) != 0;
      const float mx = numerics::decode(numerics::encode(3.0e38f, dt, {numerics::Rounding::NearestEven, numerics::Overflow::Saturate}), dt);
      kernels::TileRing narrow(ctx.kb, isa::Space::SBUF, {128, kMaxCols}, dt, 2, n.name);
      elementwise_kernel(ctx, out, {ins[0]}, [&](const View& o, const std::vector<View>& t, const View& tmp) {
        View h = kernels::corner(narrow.next(), o.partitions(), o.free_size());
        if (sat) {
          ctx.kb.tensor_scalar(tmp, t[0], AluOp::Min, mx, AluOp::Max, -mx);  // NaN stays NaN here; the select keeps it
          ctx.kb.tensor_tensor(o, t[0], t[0], AluOp::IsEqual);                 // 0 where NaN
          ctx.kb.select(tmp, o, tmp, t[0]);
          ctx.kb.copy(h, tmp);
        } else {
          ctx.kb.copy(h, t[0]);
        }
        ctx.kb.copy(o, h);
      });
    } else if (to == ElemType::Bool) {
      elementwise_kernel(ctx, out, {ins[0]}, [&](const View& o, const std::vector<View>& t, const View&) {
        ctx.kb.tensor_scalar(o, t[0], AluOp::NotEqual, 0.0f);
      });
    } else if (sub_byte_int_bits(to)) {  // int4/uint4/int2/uint2: truncate, then wrap into [lo, lo + span)
      const float span = sub_byte_int_bits(to) == 4 ? 16.0f : 4.0f;
      const float lo = to == ElemType::Int4 ? -8.0f : to == ElemType::Int2 ? -2.0f : 0.0f;
      elementwise_kernel(ctx, out, {ins[0]}, [&](const View& o, const std::vector<View>& t, const View& tmp) {
        truncate_to_integer(ctx.kb, o, t[0], tmp);
        ctx.kb.tensor_scalar(o, o, AluOp::Sub, lo, AluOp::Mod, span);  // C fmod: the dividend's sign
        ctx.kb.tensor_scalar(tmp, o, AluOp::IsLt, 0.0f, AluOp::Mul, span);
        ctx.kb.tensor_tensor(o, o, tmp, AluOp::Add);
        ctx.kb.tensor_scalar(o, o, AluOp::Add, lo);
      });
    } else if (is_integral(to) && !integral) {
      elementwise_kernel(ctx, out, {ins[0]}, [&](const View& o, const std::vector<View>& t, const View& tmp) {
        truncate_to_integer(ctx.kb, o, t[0], tmp);
      });
    } else {
      copy_kernel(ctx, out, ins[0]);
    }
    return;
  }
  if (n.op == OpKind::Floor || n.op == OpKind::Ceil || n.op == OpKind::Round) {
    kernels::TileRing extra(ctx.kb, isa::Space::SBUF, {128, kMaxCols}, DType::F32, 2, n.name);
    elementwise_kernel(ctx, out, {ins[0]}, [&](const View& o, const std::vector<View>& t, const View& tmp) {
      View t2 = kernels::corner(extra.next(), o.partitions(), o.free_size());
      round_integral(ctx.kb, n.op, o, t[0], tmp, &t2);
    });
    return;
  }
  // A fused chain (fuse_elementwise.h): its operands are loaded with the head's inputs, and
  // each op runs in place on the output tile before the one store.
  const size_t own = ins.size();
  for (const auto& e : n.epilogue)
    if (!e.operand.empty()) ins.push_back(broadcast_view(e.operand, g.tensor(e.operand).shape, os));
  elementwise_kernel(ctx, out, ins, [&](const View& o, const std::vector<View>& t, const View& tmp) {
    apply_elementwise(ctx.kb, n, n.op, o, t[0], own > 1 ? &t[1] : nullptr, own > 2 ? &t[2] : nullptr, tmp, integral);
    size_t k = own;
    for (const auto& e : n.epilogue) {
      if (e.operand.empty()) apply_elementwise(ctx.kb, n, e.op, o, o, nullptr, nullptr, tmp, false);
      else if (e.operand_first) apply_elementwise(ctx.kb, n, e.op, o, t[k++], &o, nullptr, tmp, false);
      else apply_elementwise(ctx.kb, n, e.op, o, o, &t[k++], nullptr, tmp, false);
    }
  });
}

namespace {
// A transpose of the last two axes of a large tensor (ViT's patch embedding to tokens, 768 x
// 196 per image) goes through SBUF and TensorE per matrix (kernels::transpose_tensor): a
// transposing DMA moves one element per descriptor at a few percent of DMA peak. Above the
// library's own threshold (64K elements a matrix), as its "auto" method chooses.
bool transpose_on_tensor_engine(LowerCtx& ctx, const std::vector<int64_t>& perm, const Shape& xs) {
  const size_t r = xs.size();
  if (r < 2 || perm[r - 2] != static_cast<int64_t>(r - 1) || perm[r - 1] != static_cast<int64_t>(r - 2)) return false;
  for (size_t a = 0; a + 2 < r; ++a)
    if (perm[a] != static_cast<int64_t>(a)) return false;
  const int64_t rows = xs[r - 2], cols = xs[r - 1];
  if (rows * cols <= 65536 || ctx.g.tensor(ctx.n.inputs[0]).type != ElemType::Float || ctx.tensors.count(ctx.n.inputs[0])) return false;
  const int64_t mats = numel(xs) / (rows * cols);
  const auto& in = ctx.hbm_shaped(ctx.n.inputs[0], {mats * rows, cols});
  const auto& out = ctx.hbm_shaped(ctx.n.outputs[0], {mats * cols, rows});
  for (int64_t m = 0; m < mats; ++m)
    kernels::transpose_tensor(ctx.kb, kernels::Tensor(in.slice({{m * rows, (m + 1) * rows}}), in.id(), in.name()),
                              kernels::Tensor(out.slice({{m * cols, (m + 1) * cols}}), out.id(), out.name()));
  return true;
}
}  // namespace

void lower_movement(LowerCtx& ctx) {
  const Node& n = ctx.n;
  const Graph& g = ctx.g;
  const std::string& x = n.inputs[0];
  const Shape& xs = g.tensor(x).shape;
  const Shape& os = g.tensor(n.outputs[0]).shape;
  const auto xst = row_major_strides(xs);
  SView out = row_major(n.outputs[0], os);
  if (numel(os) == 0) return;
  switch (n.op) {
    case OpKind::Transpose: {
      auto perm = transpose_perm(n, static_cast<int64_t>(xs.size()));
      if (transpose_on_tensor_engine(ctx, perm, xs)) return;
      SView in{x, 0, os, {}};
      for (auto a : perm) in.strides.push_back(xst[a]);
      copy_kernel(ctx, out, in);
      return;
    }
    case OpKind::Slice: {
      auto sr = slice_ranges(g, n, xs);
      SView in{x, 0, os, {}};
      for (size_t a = 0; a < sr.size(); ++a) {
        if (sr[a].step < 0) unsupported(n, "attribute steps<0 on a tensor computed at run time");
        in.offset += sr[a].start * xst[a];
        // One element along the axis: its stride is never used (a step of INT64_MAX times the
        // stride overflowed; fuzz, onnx). With two or more, step < dim, so step * stride fits.
        in.strides.push_back(sr[a].count > 1 ? sr[a].step * xst[a] : 0);
      }
      copy_kernel(ctx, out, in);
      return;
    }
    case OpKind::Expand: copy_kernel(ctx, out, broadcast_view(x, xs, os)); return;
    case OpKind::Concat: {
      const int64_t axis = normalize_axis(n.i("axis", 0), static_cast<int64_t>(os.size()), n.name);
      const auto ost = row_major_strides(os);
      int64_t at = 0;
      for (const auto& in : n.inputs) {
        const Shape& is = g.tensor(in).shape;
        if (numel(is) > 0) copy_kernel(ctx, SView{n.outputs[0], at * ost[axis], is, ost}, row_major(in, is));
        at += is[axis];
      }
      return;
    }
    case OpKind::Pad: {
      auto pp = pad_params(g, n, xs);
      if (pp.mode != "constant" || pp.value_at_run_time) unsupported(n, "mode " + pp.mode + " or a run-time value reached the lowering");
      const float v = static_cast<float>(pp.value);
      elementwise_kernel(ctx, out, {}, [&](const View& o, const std::vector<View>&, const View&) { ctx.kb.memset(o, v); });
      const auto ost = row_major_strides(os);
      int64_t base = 0;
      for (size_t a = 0; a < xs.size(); ++a) base += pp.begin[a] * ost[a];
      if (numel(xs) > 0) copy_kernel(ctx, SView{n.outputs[0], base, xs, ost}, row_major(x, xs));
      return;
    }
    default: break;
  }
  unsupported(n, "no data-movement kernel");
}

}  // namespace trnsim::compiler
