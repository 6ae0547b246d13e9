#include "trnsim/compiler/lower_sparse_matmul.h"

#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

using isa::ActFunc;
using kernels::Span;
using kernels::TileRing;

namespace {

constexpr int64_t kMoving = 512;  // rows of A per moving operand: one PSUM bank of fp32
constexpr int64_t kRawCols = 1024;

// A 2-D plan over rows x cols with the given strides (rows of A or of the output flattened).
TilePlan flat_plan(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  TilePlan p;
  p.outer_strides = {{}};
  p.rows = rows;
  p.cols = cols;
  p.row_stride = {row_stride};
  p.col_stride = {col_stride};
  return p;
}

}  // namespace

// The rows of an operand view [..., M, N] flatten when every axis before N that is walked (size
// > 1) steps by the row stride times the rows inside it. A size-1 axis is never walked, and
// broadcast_view gives it stride 0: [1, 4, 32] against [1, 4, 32] was refused as not flat.
TilePlan flat_operand_plan(const Node& n, const SView& v, int64_t rows, int64_t cols) {
  const int64_t r = static_cast<int64_t>(v.shape.size());
  int64_t row_stride = 0;  // the innermost walked row axis's stride
  for (int64_t d = r - 2; d >= 0; --d)
    if (v.shape[d] > 1) {
      row_stride = v.strides[d];
      break;
    }
  int64_t expected = row_stride;
  for (int64_t d = r - 2; d >= 0; --d) {
    if (v.shape[d] > 1 && v.strides[d] != expected)
      throw UnsupportedError(fmt::format("unsupported: op MatMul (a flattened matmul's epilogue operand '{}' does not flatten) at node '{}'", v.tensor, n.name));
    expected *= v.shape[d];
  }
  return flat_plan(rows, cols, row_stride, r >= 1 ? v.strides[r - 1] : 0);
}

void lower_sparse_matmul(LowerCtx& ctx) {
  const Node& n = ctx.n;
  const Graph& g = ctx.g;
  const Shape as = g.tensor(n.inputs[0]).shape, ws = g.tensor(n.inputs[1]).shape, os = g.tensor(n.outputs[0]).shape;
  if (ws.size() != 2 || as.size() < 2)
    throw UnsupportedError(fmt::format("unsupported: op MatMul (4:16 sparse with a {}-D input) at node '{}'", as.size(), n.name));
  const int64_t K = ws[0], N = ws[1], M = numel(as) / std::max<int64_t>(K, 1);
  if (M == 0 || N == 0) return;
  auto& kb = ctx.kb;
  const DType dt = ctx.matmul_dtype;
  ctx.hbm_const_as(n.inputs[1], dt);  // declared first: the weight streams at the operand width
  const SView a = row_major(n.inputs[0], {M, K}), w = row_major(n.inputs[1], {K, N}), out = row_major(n.outputs[0], {M, N});
  const TilePlan pa = flat_plan(M, K, K, 1), pw = flat_plan(K, N, N, 1), po = flat_plan(M, N, N, 1);
  std::vector<std::pair<SView, TilePlan>> ops;
  for (const auto& e : n.epilogue) {
    if (e.operand.empty()) { ops.emplace_back(); continue; }
    SView v = broadcast_view(e.operand, g.tensor(e.operand).shape, os);
    ops.emplace_back(v, flat_operand_plan(n, v, M, N));
  }
  const auto ks = kernels::split(K, 128);
  const int64_t nks = static_cast<int64_t>(ks.size());
  const int64_t eb = numerics::info(dt).bits / 8;
  // Rows per moving operand: 512 unless A^T for every K tile (double-buffered) needs more
  // than a quarter of SBUF per partition; fewer when that gives every core a chunk of its own
  // (each core transposes the rows of A it uses).
  const int64_t quarter = static_cast<int64_t>(kb.chip().core.sbuf.bytes_per_partition.value()) / 4;
  const int64_t per_core_rows = (M + ctx.cores - 1) / ctx.cores;
  const int64_t mc = std::clamp<int64_t>(std::min(quarter / (2 * nks * eb), (per_core_rows + 127) / 128 * 128) / 128 * 128, 128, kMoving);
  // Output columns per block: one DMA per K tile loads the weight of all of them (up to 2 KiB
  // per partition of bf16), so the fixed cost of a DMA is paid per block, not per 128 columns.
  // Narrower blocks when the row chunks alone would leave cores idle.
  const int64_t per_core = (N * static_cast<int64_t>(kernels::split(M, mc).size()) + ctx.cores - 1) / ctx.cores;
  const int64_t nbw = std::clamp<int64_t>(std::min(quarter / (2 * nks * eb), (per_core + 127) / 128 * 128) / 128 * 128, 128, 2 * kMoving);
  const auto mchunks = kernels::split(M, mc), nblocks = kernels::split(N, nbw);
  const int64_t units = static_cast<int64_t>(mchunks.size() * nblocks.size());

  for_each_core_share(ctx, units, [&](int64_t first, int64_t last) {
    if (first >= last) return;
    TileRing raw(kb, isa::Space::SBUF, {128, std::min(kRawCols, K)}, DType::F32, 2, n.name + ".a");
    TileRing tp(kb, isa::Space::PSUM, {128, 128}, DType::F32, 2, n.name + ".transpose");
    TileRing at(kb, isa::Space::SBUF, {128, mc}, dt, static_cast<int>(2 * nks), n.name + ".aT");
    TileRing wt(kb, isa::Space::SBUF, {128, nbw}, dt, static_cast<int>(2 * nks), n.name + ".weight");
    TileRing acc(kb, isa::Space::PSUM, {128, mc}, DType::F32, 2, n.name + ".acc");
    TileRing yt(kb, isa::Space::SBUF, {128, mc}, DType::F32, 2, n.name + ".outT");
    TileRing res(kb, isa::Space::SBUF, {128, nbw}, DType::F32, static_cast<int>(2 * mc / 128), n.name + ".result");
    TileRing opr(kb, isa::Space::SBUF, {128, nbw}, DType::F32, 2, n.name + ".operand");
    TileRing tmp(kb, isa::Space::SBUF, {128, nbw}, DType::F32, 2, n.name + ".tmp");
    int64_t cached = -1;
    std::vector<View> a_t;  // A^T of the current row chunk, one [K tile, rows] view per K tile
    for (int64_t u = first; u < last; ++u) {
      const int64_t mi = u / static_cast<int64_t>(nblocks.size());
      const Span mcs = mchunks[static_cast<size_t>(mi)], ncs = nblocks[static_cast<size_t>(u % static_cast<int64_t>(nblocks.size()))];
      const auto mts = kernels::split(mcs.size, 128);
      if (mi != cached) {  // A rows loaded wide, transposed on TensorE 128 x 128 at a time
        cached = mi;
        a_t.clear();
        for (int64_t ki = 0; ki < nks; ++ki) a_t.push_back(kernels::corner(at.next(), ks[static_cast<size_t>(ki)].size, mcs.size));
        int64_t evac = 0;
        for (const Span& mt : mts)
          for (const Span& chunk : kernels::split(K, kRawCols)) {
            View r = kernels::corner(raw.next(), mt.size, chunk.size);
            kb.load(r, ctx.view(a, pa, 0, 0, {mcs.begin + mt.begin, mt.size}, chunk), {.queue = static_cast<int>(evac % 2)});
            for (const Span& kt : kernels::split(chunk.size, 128)) {
              View t = kernels::corner(tp.next(), kt.size, mt.size);
              kb.transpose(t, r.slice({{0, mt.size}, {kt.begin, kt.end()}}));
              View dst = a_t[static_cast<size_t>((chunk.begin + kt.begin) / 128)].slice({{0, kt.size}, {mt.begin, mt.end()}});
              if (evac++ % 2) kb.activation(dst, t, ActFunc::Copy);
              else kb.copy(dst, t);
            }
          }
      }
      std::vector<View> outs;
      for (const Span& mt : mts) outs.push_back(kernels::corner(res.next(), mt.size, ncs.size));
      std::vector<View> wblk;  // W[K tile, block columns], one DMA each
      for (int64_t ki = 0; ki < nks; ++ki) {
        const Span& kt = ks[static_cast<size_t>(ki)];
        wblk.push_back(kernels::corner(wt.next(), kt.size, ncs.size));
        kb.load(wblk.back(), ctx.view(w, pw, 0, 0, kt, ncs), {.queue = 2 + static_cast<int>(ki % 8)});
      }
      for (const Span& nt : kernels::split(ncs.size, 128)) {
        View ps = kernels::corner(acc.next(), nt.size, mcs.size);
        for (int64_t ki = 0; ki < nks; ++ki) {
          const View stat = wblk[static_cast<size_t>(ki)].slice({{0, ks[static_cast<size_t>(ki)].size}, {nt.begin, nt.end()}});
          kb.matmul(ps, stat, a_t[static_cast<size_t>(ki)], ki == 0, ki + 1 == nks, /*sparse_stationary=*/true);
        }
        View y = kernels::corner(yt.next(), nt.size, mcs.size);
        kb.activation(y, ps, ActFunc::Copy);  // ScalarE evacuates PSUM
        for (size_t i = 0; i < mts.size(); ++i) {
          View t = kernels::corner(tp.next(), mts[i].size, nt.size);
          kb.transpose(t, y.slice({{0, nt.size}, {mts[i].begin, mts[i].end()}}));
          kb.copy(outs[i].slice({{0, mts[i].size}, {nt.begin, nt.end()}}), t);
        }
      }
      for (size_t i = 0; i < mts.size(); ++i) {
        const Span rows{mcs.begin + mts[i].begin, mts[i].size};
        for (size_t e = 0; e < n.epilogue.size(); ++e) {
          View t = kernels::corner(tmp.next(), rows.size, ncs.size);
          if (n.epilogue[e].operand.empty()) {
            apply_elementwise(kb, n, n.epilogue[e].op, outs[i], outs[i], nullptr, nullptr, t, false);
            continue;
          }
          View o = kernels::corner(opr.next(), rows.size, ncs.size);
          kb.load(o, ctx.view(ops[e].first, ops[e].second, 0, 0, rows, ncs), {.queue = 10});
          if (n.epilogue[e].operand_first) apply_elementwise(kb, n, n.epilogue[e].op, outs[i], o, &outs[i], nullptr, t, false);
          else apply_elementwise(kb, n, n.epilogue[e].op, outs[i], outs[i], &o, nullptr, t, false);
        }
        kb.store(ctx.view(out, po, 0, 0, rows, ncs), outs[i], {.queue = 11 + static_cast<int>(i % 4)});
      }
    }
  });
}

}  // namespace trnsim::compiler
