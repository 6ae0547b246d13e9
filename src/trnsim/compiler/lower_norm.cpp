#include "trnsim/compiler/lower_norm.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/kernels/layernorm.h"
#include "trnsim/kernels/softmax.h"

namespace trnsim::compiler {

using isa::AluOp;
using kernels::Span;
using kernels::TileRing;

namespace {
std::pair<int64_t, int64_t> rows_cols(const Shape& s) {
  int64_t cols = s.empty() ? 1 : s.back();
  return {numel(s) / std::max<int64_t>(cols, 1), cols};
}

// Rows [begin, end) of a [rows, cols] HBM tensor, as a tensor of its own for a library kernel.
kernels::Tensor row_block(const kernels::Tensor& t, int64_t begin, int64_t end) {
  return kernels::Tensor(t.slice({{begin, end}}), t.id(), t.name());
}

// Calls f(x rows, y rows) per core on its share of 128-row tiles (core_split.h).
void split_rows(LowerCtx& ctx, int64_t rows, const kernels::Tensor& x, const kernels::Tensor& y,
                const std::function<void(const kernels::Tensor&, const kernels::Tensor&)>& f) {
  const int64_t tiles = (rows + 127) / 128;
  for_each_core_share(ctx, tiles, [&](int64_t b, int64_t e) {
    const int64_t r0 = b * 128, r1 = std::min(rows, e * 128);
    if (r0 < r1) f(row_block(x, r0, r1), row_block(y, r0, r1));
  });
}
}  // namespace

void lower_softmax(LowerCtx& ctx) {
  auto [rows, cols] = rows_cols(ctx.g.tensor(ctx.n.inputs[0]).shape);
  if (rows * cols == 0) return;
  const auto& x = ctx.hbm_shaped(ctx.n.inputs[0], {rows, cols});
  const auto& y = ctx.hbm_shaped(ctx.n.outputs[0], {rows, cols});
  split_rows(ctx, rows, x, y, [&](const kernels::Tensor& xs, const kernels::Tensor& ys) { kernels::softmax(ctx.kb, xs, ys); });
}

void lower_layernorm(LowerCtx& ctx) {
  auto [rows, cols] = rows_cols(ctx.g.tensor(ctx.n.inputs[0]).shape);
  if (rows * cols == 0) return;
  const auto& x = ctx.hbm_shaped(ctx.n.inputs[0], {rows, cols});
  const auto& gamma = ctx.hbm_shaped(ctx.n.inputs[1], {cols});
  const auto& beta = ctx.hbm_shaped(ctx.n.inputs[2], {cols});
  const auto& y = ctx.hbm_shaped(ctx.n.outputs[0], {rows, cols});
  const float eps = static_cast<float>(ctx.n.f("epsilon", 1e-5));
  split_rows(ctx, rows, x, y, [&](const kernels::Tensor& xs, const kernels::Tensor& ys) {
    kernels::layernorm(ctx.kb, xs, gamma, beta, ys, eps);
  });
}

void lower_reduce(LowerCtx& ctx) {
  const Node& n = ctx.n;
  auto [rows, cols] = rows_cols(ctx.g.tensor(n.inputs[0]).shape);
  if (rows == 0) return;
  if (cols == 0) throw UnsupportedError(fmt::format("unsupported: op {} (empty reduction) at node '{}'", op_name(n.op), n.name));
  AluOp op = n.op == OpKind::ReduceMax ? AluOp::Max : n.op == OpKind::ReduceMin ? AluOp::Min : AluOp::Add;
  auto& kb = ctx.kb;
  const auto& x = ctx.hbm_shaped(n.inputs[0], {rows, cols});
  const auto& y = ctx.hbm(n.outputs[0]);
  const int64_t w = std::min<int64_t>(cols, 2048);
  TileRing xr(kb, isa::Space::SBUF, {128, w}, DType::F32, 2, n.name + ".x");
  TileRing ar(kb, isa::Space::SBUF, {128, 2}, DType::F32, 2, n.name + ".acc");
  for (const Span& rt : kernels::split(rows, 128)) {
    const kernels::Tile& acc = ar.next();
    View total = acc.slice({{0, rt.size}, {0, 1}});
    View part = acc.slice({{0, rt.size}, {1, 2}});
    bool first = true;
    for (const Span& ct : kernels::split(cols, w)) {
      View xt = kernels::corner(xr.next(), rt.size, ct.size);
      kb.load(xt, x.slice({rt.range(), ct.range()}));
      kb.reduce(first ? total : part, xt, op);
      if (!first) kb.tensor_tensor(total, total, part, op);
      first = false;
    }
    if (n.op == OpKind::ReduceMean) kb.tensor_scalar(total, total, AluOp::Mul, 1.0f / static_cast<float>(cols));
    isa::AccessPattern ap = y.ap();
    ap.offset = rt.begin * ap.element_bytes();
    ap.partitions = static_cast<uint16_t>(rt.size);
    ap.partition_stride = 1;
    ap.ndims = 1;
    ap.dims = {};
    ap.dims[0] = {1, 1};
    kb.store(View(ap, {rt.size, 1}, y.buffer()), total);
  }
}

}  // namespace trnsim::compiler
