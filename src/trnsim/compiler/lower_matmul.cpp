#include "trnsim/compiler/lower_matmul.h"

#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

using isa::ActFunc;
using isa::AluOp;
using kernels::Span;
using kernels::TileRing;

namespace {

constexpr int64_t kTileN = 512;         // one PSUM bank of fp32
constexpr int64_t kMaxCachedK = 32;     // stationary blocks kept per row tile

// A one-view plan over `v` (shape batch + [x, y]) with rows along axis x or y.
TilePlan plan2(const SView& v, const Shape& batch, bool swap) {
  TilePlan p;
  const size_t r = v.shape.size();
  p.outer = batch;
  p.outer_strides = {std::vector<int64_t>(v.strides.begin(), v.strides.begin() + static_cast<long>(batch.size()))};
  p.rows = swap ? v.shape[r - 1] : v.shape[r - 2];
  p.cols = swap ? v.shape[r - 2] : v.shape[r - 1];
  p.row_stride = {swap ? v.strides[r - 1] : v.strides[r - 2]};
  p.col_stride = {swap ? v.strides[r - 2] : v.strides[r - 1]};
  return p;
}

struct MatmulJob {
  Shape batch;
  int64_t m = 0, k = 0, n = 0;
  SView a, b, out;                     // batch+[M,K], batch+[K,N], batch+[M,N]
  std::vector<std::pair<Epilogue, SView>> epilogue;  // operand views over batch+[M,N]
  DType dtype = DType::F32;
};

// Runs the job split across the node's cores.
void matmul_kernel(LowerCtx& ctx, const MatmulJob& j) {
  auto& kb = ctx.kb;
  const TilePlan pa_rows = plan2(j.a, j.batch, false);  // [M, K]
  const TilePlan pa_t = plan2(j.a, j.batch, true);      // [K, M]
  const TilePlan pb = plan2(j.b, j.batch, false);       // [K, N]
  const TilePlan po = plan2(j.out, j.batch, false);     // [M, N]
  std::vector<TilePlan> pe;
  for (const auto& [e, v] : j.epilogue) pe.push_back(v.shape.empty() ? TilePlan{} : plan2(v, j.batch, false));
  const bool a_rows = j.a.strides.back() == 1 && j.m > 1;  // contiguous along K: transpose on chip
  const auto ks = kernels::split(j.k, 128);
  const bool cache = static_cast<int64_t>(ks.size()) <= kMaxCachedK;
  const int64_t tn = std::min(j.n, kTileN);

  // The pieces of work the node's cores share (core_split.h): (batch, row tile, column range).
  // Column ranges only when there are fewer row tiles than cores; every piece keeps the whole
  // K reduction, so the result does not depend on the split.
  struct Piece {
    int64_t bi;
    Span mt, cols;
  };
  const int64_t nb = numel(j.batch);
  const auto mtiles = kernels::split(j.m, 128);
  const int64_t row_units = nb * static_cast<int64_t>(mtiles.size());
  int64_t parts = 1;
  if (row_units < ctx.cores)
    parts = column_parts(row_units, j.n, kMinColsPerCore, ctx.cores);
  std::vector<Piece> pieces;
  for (int64_t bi = 0; bi < nb; ++bi)
    for (const Span& mt : mtiles)
      for (int64_t p = 0; p < parts; ++p) {
        const int64_t c0 = p * j.n / parts, c1 = (p + 1) * j.n / parts;
        pieces.push_back({bi, mt, {c0, c1 - c0}});
      }

  auto run = [&](int64_t first, int64_t last) {
    TileRing st(kb, isa::Space::SBUF, {128, 128}, j.dtype, cache ? std::max<int>(2, static_cast<int>(ks.size()) + 1) : 2, ctx.n.name + ".stationary");
    TileRing araw(kb, isa::Space::SBUF, {128, 128}, j.dtype, 2, ctx.n.name + ".a");
    TileRing tp(kb, isa::Space::PSUM, {128, 128}, DType::F32, 2, ctx.n.name + ".aT");
    TileRing mv(kb, isa::Space::SBUF, {128, tn}, j.dtype, 3, ctx.n.name + ".moving");
    TileRing acc(kb, isa::Space::PSUM, {128, tn}, DType::F32, 2, ctx.n.name + ".acc");
    TileRing res(kb, isa::Space::SBUF, {128, tn}, DType::F32, 2, ctx.n.name + ".result");
    TileRing opr(kb, isa::Space::SBUF, {128, tn}, DType::F32, 2, ctx.n.name + ".operand");
    TileRing tmp(kb, isa::Space::SBUF, {128, tn}, DType::F32, 2, ctx.n.name + ".tmp");

    auto stationary = [&](int64_t bi, Span mt, Span kt) {
      View s = kernels::corner(st.next(), kt.size, mt.size);
      if (a_rows) {
        View a = kernels::corner(araw.next(), mt.size, kt.size);
        kb.load(a, ctx.view(j.a, pa_rows, 0, bi, mt, kt));
        View t = kernels::corner(tp.next(), kt.size, mt.size);
        kb.transpose(t, a);
        kb.copy(s, t);
      } else {
        kb.load(s, ctx.view(j.a, pa_t, 0, bi, kt, mt));
      }
      return s;
    };

    std::vector<View> cached;
    int64_t cached_bi = -1, cached_m = -1;
    for (int64_t pi = first; pi < last; ++pi) {
      const Piece& pc = pieces[static_cast<size_t>(pi)];
      const int64_t bi = pc.bi;
      const Span mt = pc.mt;
      if (cache && (bi != cached_bi || mt.begin != cached_m)) {
        cached.clear();
        for (const Span& kt : ks) cached.push_back(stationary(bi, mt, kt));
        cached_bi = bi;
        cached_m = mt.begin;
      }
      for (const Span& ntl : kernels::split(pc.cols.size, tn)) {
        const Span nt{pc.cols.begin + ntl.begin, ntl.size};
        View ps = kernels::corner(acc.next(), mt.size, nt.size);
        for (size_t ki = 0; ki < ks.size(); ++ki) {
          View s = cache ? cached[ki] : stationary(bi, mt, ks[ki]);
          View m = kernels::corner(mv.next(), ks[ki].size, nt.size);
          kb.load(m, ctx.view(j.b, pb, 0, bi, ks[ki], nt));
          kb.matmul(ps, s, m, ki == 0, ki + 1 == ks.size());
        }
        View r = kernels::corner(res.next(), mt.size, nt.size);
        kb.activation(r, ps, ActFunc::Copy);  // ScalarE evacuates PSUM
        for (size_t e = 0; e < j.epilogue.size(); ++e) {
          const Epilogue& ep = j.epilogue[e].first;
          View t = kernels::corner(tmp.next(), mt.size, nt.size);
          if (ep.operand.empty()) {
            apply_elementwise(kb, ctx.n, ep.op, r, r, nullptr, nullptr, t, false);
            continue;
          }
          View o = kernels::corner(opr.next(), mt.size, nt.size);
          kb.load(o, ctx.view(j.epilogue[e].second, pe[e], 0, bi, mt, nt));
          if (ep.operand_first) apply_elementwise(kb, ctx.n, ep.op, r, o, &r, nullptr, t, false);
          else apply_elementwise(kb, ctx.n, ep.op, r, r, &o, nullptr, t, false);
        }
        kb.store(ctx.view(j.out, po, 0, bi, mt, nt), r);
      }
    }
  };
  for_each_core_share(ctx, static_cast<int64_t>(pieces.size()), run);
}

}  // namespace

void lower_matmul(LowerCtx& ctx) {
  const Node& n = ctx.n;
  const Graph& g = ctx.g;
  Shape as = g.tensor(n.inputs[0]).shape, bs = g.tensor(n.inputs[1]).shape;
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  MatmulJob j;
  j.m = as[as.size() - 2];
  j.k = as.back();
  j.n = bs.back();
  j.batch = broadcast_shapes(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2), n.name);
  j.dtype = ctx.matmul_dtype;
  Shape full = j.batch;
  full.push_back(j.m);
  full.push_back(j.n);
  auto with = [&](Shape s, int64_t x, int64_t y) { s.push_back(x); s.push_back(y); return s; };
  j.a = broadcast_view(n.inputs[0], as, with(j.batch, j.m, j.k));
  j.b = broadcast_view(n.inputs[1], bs, with(j.batch, j.k, j.n));
  j.out = row_major(n.outputs[0], full);
  const Shape& os = g.tensor(n.outputs[0]).shape;
  for (const auto& e : n.epilogue) {
    SView v;
    if (!e.operand.empty()) {
      if (os != full) throw UnsupportedError(fmt::format("unsupported: op MatMul (epilogue on a 1-D matmul) at node '{}'", n.name));
      v = broadcast_view(e.operand, g.tensor(e.operand).shape, full);
    }
    j.epilogue.emplace_back(e, v);
  }
  if (numel(full) == 0) return;
  if (j.k == 0) throw UnsupportedError(fmt::format("unsupported: op MatMul (empty contraction) at node '{}'", n.name));
  matmul_kernel(ctx, j);
}

}  // namespace trnsim::compiler
