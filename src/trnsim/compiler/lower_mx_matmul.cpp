#include "trnsim/compiler/lower_mx_matmul.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_elementwise.h"
#include "trnsim/compiler/lower_sparse_matmul.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

using isa::ActFunc;
using kernels::Range;
using kernels::Span;
using kernels::TileRing;

namespace {

constexpr int64_t kCols = 512;     // weight columns per moving operand: one PSUM bank of fp32
constexpr int64_t kRawCols = 1024; // columns of A per row load

TilePlan flat(int64_t rows, int64_t cols, int64_t row_stride) {
  TilePlan p;
  p.outer_strides = {{}};
  p.rows = rows;
  p.cols = cols;
  p.row_stride = {row_stride};
  p.col_stride = {1};
  return p;
}

// The MX format A is quantised to on chip; nullopt for weight-only MX ("none": A stays in the
// policy's operand dtype and the weight is dequantised on load).
std::optional<DType> activation_elements(const Node& n) {
  const std::string f = n.s("mx_activations", "mxfp8");
  if (f == "none") return std::nullopt;
  if (f == "mxfp8") return DType::F8E4M3;
  if (f == "mxfp4") return DType::F4E2M1;
  throw UnsupportedError(fmt::format("unsupported: MX activations '{}' at node '{}' (expected mxfp8, mxfp4 or none)", f, n.name));
}

}  // namespace

void lower_mx_matmul(LowerCtx& ctx) {
  const Node& n = ctx.n;
  const Graph& g = ctx.g;
  const Shape as = g.tensor(n.inputs[0]).shape, ws = g.tensor(n.inputs[1]).shape, os = g.tensor(n.outputs[0]).shape;
  if (ws.size() != 2 || as.size() < 2 || n.inputs.size() != 3)
    throw UnsupportedError(fmt::format("unsupported: op MatMul (MX with a {}-D input) at node '{}'", as.size(), n.name));
  for (const auto& e : n.epilogue)
    if (e.op == OpKind::LayerNormalization)
      throw UnsupportedError(fmt::format("unsupported: a LayerNorm fused into the MX matmul '{}'", n.name));
  const int64_t K = ws[0], N = ws[1], M = numel(as) / std::max<int64_t>(K, 1);
  if (M == 0 || N == 0) return;
  auto& kb = ctx.kb;
  const DType welem = ctx.hbm(n.inputs[1]).ap().dtype;
  const std::optional<DType> xelem = activation_elements(n);
  const bool weight_only = !xelem;
  ctx.hbm(n.inputs[2]);
  // Rows of A arrive in the policy's operand dtype (the DMA converts), as the bf16 kernel's do;
  // weight-only MX dequantises the weight into that dtype too (exact: e4m3/e2m1 x 2^k).
  const DType adt = ctx.matmul_dtype == DType::F32 ? DType::F32 : DType::BF16;
  const SView a = row_major(n.inputs[0], {M, K}), w = row_major(n.inputs[1], {K, N}), sc = row_major(n.inputs[2], {K / 32, N}),
              out = row_major(n.outputs[0], {M, N});
  const TilePlan pa = flat(M, K, K), pw = flat(K, N, N), ps = flat(K / 32, N, N), po = flat(M, N, N);
  std::vector<std::pair<SView, TilePlan>> ops;
  for (const auto& e : n.epilogue) {
    if (e.operand.empty()) { ops.emplace_back(); continue; }
    SView v = broadcast_view(e.operand, g.tensor(e.operand).shape, os);
    ops.emplace_back(v, flat_operand_plan(n, v, M, N));
  }
  // Columns per block: a PSUM bank, narrower (multiples of 128) when that gives every core a
  // block of its own (each core then quantises the rows of A it uses).
  const int64_t nmt = (M + 127) / 128;
  const int64_t per_core = (N * nmt + ctx.cores - 1) / ctx.cores;
  const int64_t cols = std::clamp<int64_t>((per_core + 127) / 128 * 128, 128, kCols);
  const auto ks = kernels::split(K, 128), mts = kernels::split(M, 128), nbs = kernels::split(N, cols);
  const int64_t nks = static_cast<int64_t>(ks.size()), nbl = static_cast<int64_t>(nbs.size());
  const int64_t units = static_cast<int64_t>(mts.size()) * nbl;

  // When K is whole 128-row tiles, a chunk of `per_chunk` K tiles of a block's weight (or of its
  // scales) in one DMA: partition p holds row ki * 128 + p (scales: ki * 4 + p) of each K tile ki
  // of the chunk, side by side (fewer, larger transfers: each DMA has a fixed cost). Weight-only
  // keeps a dequantised copy too (2 or 4 bytes a value): smaller chunks.
  const bool chunked = K % 128 == 0;
  const int64_t per_chunk = chunked ? std::clamp<int64_t>((weight_only ? 8192 : 32768) / cols, 1, nks) : 1;
  const int64_t chunks = (nks + per_chunk - 1) / per_chunk;
  auto load_all = [&](const View& dst, const SView& v, const TilePlan& p, int64_t rows_per_tile, Span first_rows, int64_t tiles, Span block,
                      int queue) {
    View src = ctx.view(v, p, 0, 0, first_rows, block);
    isa::AccessPattern ap = src.ap();
    ap.ndims = 2;
    ap.dims[0] = {static_cast<int32_t>(rows_per_tile * N), static_cast<int32_t>(tiles)};
    ap.dims[1] = {1, static_cast<int32_t>(block.size)};
    kb.load(dst, View(ap, {first_rows.size, tiles * block.size}, src.buffer()), {.queue = queue});
  };
  // Weight-only: scale row r (one per 32 rows of K) read onto the partitions of its 32 rows (a
  // partition-broadcast DMA, stride 0 between partitions), so that VectorE multiplies codes by
  // scales lane by lane. `all_tiles`: the row of every K tile at once (the one-DMA layout).
  auto load_scale_rows = [&](const View& dst, int64_t row, int64_t parts, Span block, int64_t tiles, int queue) {
    View src = ctx.view(sc, ps, 0, 0, {row, 1}, block);
    isa::AccessPattern ap = src.ap();
    ap.partitions = static_cast<uint16_t>(parts);
    ap.partition_stride = 0;
    ap.ndims = 2;
    ap.dims[0] = {static_cast<int32_t>(4 * N), static_cast<int32_t>(tiles)};
    ap.dims[1] = {1, static_cast<int32_t>(block.size)};
    kb.load(dst, View(ap, {parts, tiles * block.size}, src.buffer()), {.queue = queue});
  };

  // Units run column block by column block (the weight block stays resident while the row tiles
  // of A pass: weight-stationary), row tiles inside.
  for_each_core_share(ctx, units, [&](int64_t first, int64_t last) {
    if (first >= last) return;
    // Every chunk of a block stays resident while its row tiles pass; two blocks in flight.
    const int64_t wcols = per_chunk * cols;
    const int wdepth = static_cast<int>(2 * chunks);
    TileRing raw(kb, isa::Space::SBUF, {128, std::min(kRawCols, K)}, adt, 2, n.name + ".a");
    TileRing tp(kb, isa::Space::PSUM, {128, 128}, DType::F32, 2, n.name + ".transpose");
    TileRing ac(kb, isa::Space::SBUF, {128, 128}, xelem.value_or(adt), static_cast<int>(2 * nks), n.name + (weight_only ? ".aT" : ".aT_mx"));
    std::optional<TileRing> asc, wd;
    if (!weight_only) asc.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{4, 128}, DType::E8M0, static_cast<int>(2 * nks), n.name + ".aT_scale");
    if (weight_only) wd.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, wcols}, adt, wdepth, n.name + ".weight");
    TileRing wc(kb, isa::Space::SBUF, {128, wcols}, welem, wdepth, n.name + ".weight_mx");
    TileRing wsc(kb, isa::Space::SBUF, {weight_only ? 128 : 4, wcols}, DType::E8M0, wdepth, n.name + ".weight_scale");
    TileRing acc(kb, isa::Space::PSUM, {128, kCols}, DType::F32, 2, n.name + ".acc");
    TileRing res(kb, isa::Space::SBUF, {128, kCols}, DType::F32, 2, n.name + ".result");
    TileRing opr(kb, isa::Space::SBUF, {128, kCols}, DType::F32, 2, n.name + ".operand");
    TileRing tmp(kb, isa::Space::SBUF, {128, kCols}, DType::F32, 2, n.name + ".tmp");
    int64_t cached_a = -1, cached_w = -1, evac = 0;
    std::vector<std::pair<View, View>> a_t, w_t;  // per K tile: A^T (MX: codes, scales) / the weight block's codes, scales
    std::vector<View> w_bf;                        // weight-only: per K tile, the block dequantised
    // Weight-only: codes x scales on VectorE into the operand dtype, once per block load.
    auto dequantise = [&](const View& dst, const View& codes, const View& scales) { kb.tensor_tensor(dst, codes, scales, isa::AluOp::Mul); };
    for (int64_t u = first; u < last; ++u) {
      const int64_t mi = u % nmt, ni = u / nmt;
      const Span mt = mts[static_cast<size_t>(mi)], cb = nbs[static_cast<size_t>(ni)];
      if (ni != cached_w) {  // the block's codes and scales, at their own width
        cached_w = ni;
        w_t.clear();
        w_bf.clear();
        for (int64_t c = 0; chunked && c < chunks; ++c) {
          const int64_t k0 = c * per_chunk, nt = std::min(per_chunk, nks - k0), sp = weight_only ? 128 : 4, q = ni * chunks + c;
          const View wt = kernels::corner(wc.next(), 128, nt * cb.size), wst = kernels::corner(wsc.next(), sp, nt * cb.size);
          load_all(wt, w, pw, 128, {k0 * 128, 128}, nt, cb, 2 + static_cast<int>(q % 6));
          if (!weight_only) load_all(wst, sc, ps, 4, {k0 * 4, 4}, nt, cb, 8 + static_cast<int>(q % 3));
          for (int64_t j = 0; weight_only && j < 4; ++j)
            load_scale_rows(wst.slice({{32 * j, 32 * j + 32}, {0, nt * cb.size}}), k0 * 4 + j, 32, cb, nt, 8 + static_cast<int>(j % 3));
          const View wb = weight_only ? kernels::corner(wd->next(), 128, nt * cb.size) : View{};
          for (int64_t t = 0; t < nt; ++t) {
            const Range r{t * cb.size, (t + 1) * cb.size};
            w_t.emplace_back(wt.slice({{0, 128}, r}), wst.slice({{0, sp}, r}));
            if (weight_only) dequantise(w_bf.emplace_back(wb.slice({{0, 128}, r})), w_t.back().first, w_t.back().second);
          }
        }
        if (!chunked) {
          for (int64_t ki = 0; ki < nks; ++ki) {
            const Span& kt = ks[static_cast<size_t>(ki)];
            const Span k32{kt.begin / 32, (kt.size + 31) / 32};
            View wt = kernels::corner(wc.next(), kt.size, cb.size), wst = kernels::corner(wsc.next(), weight_only ? kt.size : k32.size, cb.size);
            kb.load(wt, ctx.view(w, pw, 0, 0, kt, cb), {.queue = 2 + static_cast<int>(ki % 6)});
            if (!weight_only) kb.load(wst, ctx.view(sc, ps, 0, 0, k32, cb), {.queue = 8 + static_cast<int>(ki % 3)});
            for (int64_t j = 0; weight_only && j < k32.size; ++j) {
              const int64_t p0 = 32 * j, p1 = std::min(kt.size, p0 + 32);
              load_scale_rows(wst.slice({{p0, p1}, {0, cb.size}}), k32.begin + j, p1 - p0, cb, 1, 8 + static_cast<int>(j % 3));
            }
            w_t.emplace_back(wt, wst);
            if (weight_only) dequantise(w_bf.emplace_back(kernels::corner(wd->next(), kt.size, cb.size)), wt, wst);
          }
        }
      }
      if (mi != cached_a) {  // A rows loaded wide, transposed on TensorE, quantised (or copied) out of PSUM
        cached_a = mi;
        a_t.clear();
        for (const Span& kt : ks)
          a_t.emplace_back(kernels::corner(ac.next(), kt.size, mt.size),
                           weight_only ? View{} : kernels::corner(asc->next(), (kt.size + 31) / 32, mt.size));
        for (const Span& chunk : kernels::split(K, kRawCols)) {
          View r = kernels::corner(raw.next(), mt.size, chunk.size);
          kb.load(r, ctx.view(a, pa, 0, 0, mt, chunk), {.queue = static_cast<int>(evac++ % 2)});
          for (const Span& kt : kernels::split(chunk.size, 128)) {
            View t = kernels::corner(tp.next(), kt.size, mt.size);
            kb.transpose(t, r.slice({{0, mt.size}, {kt.begin, kt.end()}}));
            const auto& [codes, scales] = a_t[static_cast<size_t>((chunk.begin + kt.begin) / 128)];
            if (!weight_only) kb.quantize_mx(codes, scales, t);
            else kb.activation(codes, t, ActFunc::Copy);  // ScalarE: VectorE dequantises the weight
          }
        }
      }
      View ps_t = kernels::corner(acc.next(), mt.size, cb.size);
      for (int64_t ki = 0; ki < nks; ++ki) {
        const auto& [codes, scales] = a_t[static_cast<size_t>(ki)];
        const auto& [wt, wst] = w_t[static_cast<size_t>(ki)];
        if (weight_only) kb.matmul(ps_t, codes, w_bf[static_cast<size_t>(ki)], ki == 0, ki + 1 == nks);
        else kb.matmul_mx(ps_t, codes, scales, wt, wst, ki == 0, ki + 1 == nks);
      }
      View y = kernels::corner(res.next(), mt.size, cb.size);
      kb.activation(y, ps_t, ActFunc::Copy);  // ScalarE evacuates PSUM
      for (size_t e = 0; e < n.epilogue.size(); ++e) {
        View t = kernels::corner(tmp.next(), mt.size, cb.size);
        if (n.epilogue[e].operand.empty()) {
          apply_elementwise(kb, n, n.epilogue[e].op, y, y, nullptr, nullptr, t, false);
          continue;
        }
        View o = kernels::corner(opr.next(), mt.size, cb.size);
        kb.load(o, ctx.view(ops[e].first, ops[e].second, 0, 0, mt, cb), {.queue = 11});
        if (n.epilogue[e].operand_first) apply_elementwise(kb, n, n.epilogue[e].op, y, o, &y, nullptr, t, false);
        else apply_elementwise(kb, n, n.epilogue[e].op, y, y, &o, nullptr, t, false);
      }
      kb.store(ctx.view(out, po, 0, 0, mt, cb), y, {.queue = 12 + static_cast<int>(u % 4)});
    }
  });
}

}  // namespace trnsim::compiler
