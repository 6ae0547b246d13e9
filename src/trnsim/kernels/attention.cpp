#include "trnsim/kernels/attention.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "trnsim/common/error.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::kernels {
namespace {

constexpr int64_t kQTile = 128;
constexpr int64_t kKvBlock = 512;    // keys per S block: one PSUM bank of fp32
constexpr float kMasked = -1e30f;
constexpr int kLoadQueues = 12, kStoreQueues = 4;  // of the builder's 16    // exp(scale * (s + kMasked) - m) == 0 in fp32
enum Col : int64_t { kMax0 = 0, kSum0 = 2, kNegMax = 4, kBlockMax = 5, kAlpha = 6, kRowSum = 7,
                     kRecip = 8, kCols = 9 };

// Query tiles whose block steps interleave: 4, or 2 for fp32, whose P^T tiles take a whole
// PSUM bank each (a group's P^T must all be live at once; PSUM has 8 banks).
constexpr size_t kGroup = 4;

// One query tile in flight: its Q^T, running statistics (ping-pong max/sum columns) and output
// accumulator.
struct QueryTile {
  Span rows;
  View qT;
  Tile stats;
  View acc;
  View p;       // this block's probabilities, from phase A to phase B
  View pT_psum;  // their transpose in PSUM, then in SBUF
  View pT;
  int cur = 0;
  View stat(int64_t c) const { return stats.slice({{0, rows.size}, {c, c + 1}}); }
};

struct Dims {
  int64_t heads, sq, sk, d;
};

void check_operand(const AttentionOperand& o, const char* what, int64_t heads) {
  if (o.head_shape.size() != o.head_strides.size())
    throw ShapeError(fmt::format("attention: {} has {} head axes but {} head strides", what, o.head_shape.size(),
                                 o.head_strides.size()));
  int64_t n = 1;
  for (int64_t s : o.head_shape) n *= s;
  if (n != heads) throw ShapeError(fmt::format("attention: {} has {} heads, q has {}", what, n, heads));
}

Dims check_spec(const AttentionSpec& s) {
  Dims d{s.heads, s.seq_q, s.seq_k, s.head_dim};
  if (d.heads < 1 || d.sq < 1 || d.sk < 1 || d.d < 1)
    throw ShapeError(fmt::format("attention: heads {}, seq_q {}, seq_k {}, head_dim {} must all be >= 1", d.heads,
                                 d.sq, d.sk, d.d));
  if (d.d > isa::kMaxPartitions)
    throw ShapeError(fmt::format("attention: head_dim {} > 128: Q^T and K^T hold head_dim on the 128 "
                                 "partitions (the contraction of Q K^T)", d.d));
  if (s.causal && d.sq != d.sk)
    throw ShapeError(fmt::format("attention: causal needs as many queries as keys ({} vs {})", d.sq, d.sk));
  check_operand(s.q, "q", d.heads);
  check_operand(s.k, "k", d.heads);
  check_operand(s.v, "v", d.heads);
  check_operand(s.out, "out", d.heads);
  if (s.mask) check_operand(*s.mask, "mask", d.heads);
  return d;
}

// Keys [k0, k0 + 128 * tiles) of head h as [128, tiles * d]: the partition is the key's
// place in its tile, then (tile, column) along the free axis.
View tile_view(const AttentionOperand& o, int64_t h, int64_t k0, int64_t tiles, int64_t d) {
  isa::AccessPattern ap = o.rows(h, {k0, k0 + 128}, {0, d}).ap();
  ap.ndims = 2;
  ap.dims[0] = {static_cast<int32_t>(128 * o.row_stride), static_cast<int32_t>(tiles)};
  ap.dims[1] = {static_cast<int32_t>(o.col_stride), static_cast<int32_t>(d)};
  return View(ap, {128, tiles * d}, o.tensor.buffer());
}

}  // namespace

int64_t AttentionOperand::head_offset(int64_t h) const {
  int64_t off = offset;
  for (int i = static_cast<int>(head_shape.size()) - 1; i >= 0; --i) {
    off += (h % head_shape[i]) * head_strides[i];
    h /= head_shape[i];
  }
  return off;
}

View AttentionOperand::rows(int64_t h, Range r, Range c) const {
  isa::AccessPattern ap = tensor.ap();
  ap.offset = (head_offset(h) + r.begin * row_stride + c.begin * col_stride) * ap.element_bytes();
  ap.partitions = static_cast<uint16_t>(r.size());
  ap.partition_stride = row_stride;
  ap.ndims = 1;
  ap.dims = {};
  ap.dims[0] = {static_cast<int32_t>(col_stride), static_cast<int32_t>(c.size())};
  return View(ap, {r.size(), c.size()}, tensor.buffer());
}

AttentionOperand AttentionOperand::dense(const Tensor& t) {
  if (t.shape().size() != 3)
    throw ShapeError(fmt::format("attention: {} must be [heads, seq, head_dim], it has {} axes", t.name(), t.shape().size()));
  AttentionOperand o;
  o.tensor = t;
  o.head_shape = {t.shape()[0]};
  o.head_strides = {t.shape()[1] * t.shape()[2]};
  o.row_stride = t.shape()[2];
  o.col_stride = 1;
  return o;
}

void attention(KernelBuilder& kb, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
               bool causal, float scale) {
  if (q.shape().size() != 3)
    throw ShapeError(fmt::format("attention: q must be [heads, seq, head_dim], it has {} axes", q.shape().size()));
  for (const Tensor* t : {&k, &v, &out})
    if (t->shape() != q.shape() || t->dtype() != q.dtype())
      throw ShapeError(fmt::format("attention: {} must have q's shape and dtype", t->name()));
  AttentionSpec s;
  s.q = AttentionOperand::dense(q);
  s.k = AttentionOperand::dense(k);
  s.v = AttentionOperand::dense(v);
  s.out = AttentionOperand::dense(out);
  s.heads = q.shape()[0];
  s.seq_q = s.seq_k = q.shape()[1];
  s.head_dim = q.shape()[2];
  s.causal = causal;
  s.scale = scale;
  s.dtype = q.dtype();
  attention(kb, s);
}

void attention(KernelBuilder& kb, const AttentionSpec& spec) {
  const Dims n = check_spec(spec);
  const DType dt = spec.dtype;
  const int64_t dsz = static_cast<int64_t>(numerics::storage_bytes(dt, 1));
  const bool causal = spec.causal;
  const bool masked = spec.mask.has_value();
  float scale = spec.scale;
  if (scale <= 0) scale = 1.0f / std::sqrt(static_cast<float>(n.d));
  // With an additive mask the scores are scaled before the mask is added (VectorE), so the
  // max and exp see already-scaled scores.
  const float exp_scale = masked ? 1.0f : scale;
  const int64_t h0 = spec.head_begin, h1 = spec.head_end < 0 ? n.heads : spec.head_end;
  if (h0 < 0 || h1 > n.heads || h0 > h1)
    throw ShapeError(fmt::format("attention: heads [{}, {}) outside [0, {})", h0, h1, n.heads));
  if (h0 == h1) return;
  const auto key_tiles = split(n.sk, 128);
  const int64_t nkt = static_cast<int64_t>(key_tiles.size());

  // Per head, K^T (seq elements per partition) and V (nkt x head_dim); double-buffered across
  // heads when that fits, so the next head's K/V load under this head's compute.
  const int64_t kv_bytes = (n.sk + nkt * n.d) * dsz;
  const int64_t avail = static_cast<int64_t>(kb.chip().core.sbuf.bytes_per_partition.value()) * 3 / 4 -
                        (kGroup * kKvBlock * (4 + 2 * dsz + (masked ? 4 : 0)) + 6 * kGroup * n.d * 4);  // block-level tiles
  if (kv_bytes > avail)
    throw ShapeError(fmt::format("attention: seq {} needs {} KiB per partition of SBUF for one head's K^T "
                                 "and V ({}), at most {} KiB fit: use seq <= {}", n.sk, kv_bytes / 1024,
                                 numerics::name(dt), avail / 1024, avail / (dsz * (1 + n.d / 128.0)) / 128 * 128));
  const DType pdt = dt == DType::F32 ? DType::F32 : DType::BF16;  // P feeds TensorE
  // Short sequences (a block of at most 256 keys) take a fraction of a PSUM bank per tile:
  // twice as many tiles interleave when the group's PSUM tiles still fit.
  const int64_t kvb = std::min<int64_t>(kKvBlock, (n.sk + 127) / 128 * 128);
  auto psum_bytes = [&](int64_t gs) {  // transposes, scores, P^T, P V
    return 2 * kvb * 4 + gs * (kvb * 4 + kvb * static_cast<int64_t>(numerics::storage_bytes(pdt, 1)) + n.d * 4);
  };
  const size_t base_group = pdt == DType::F32 ? 2 : kGroup;
  const bool wide = kvb <= 256 && psum_bytes(2 * static_cast<int64_t>(base_group)) <=
                                      static_cast<int64_t>(kb.chip().core.psum.bytes_per_partition.value());
  const size_t group_size = base_group * (wide ? 2 : 1);
  const int g = static_cast<int>(group_size);
  // A group interleaves query tiles of several heads when K^T and V of two groups' heads fit
  // (short sequences: a head is one query tile, whose steps alone leave the engines idle).
  const bool cross_heads = static_cast<int64_t>(2 * group_size) * kv_bytes <= avail;
  const int kv_depth = cross_heads ? 2 * g : 2 * kv_bytes <= avail ? 2 : 1;
  // Block-wide tiles (kvb) only as wide as a block can be.
  TileRing kt_ring(kb, Space::SBUF, {128, n.sk}, dt, kv_depth, "attention.kT");
  TileRing v_ring(kb, Space::SBUF, {128, nkt * n.d}, dt, kv_depth, "attention.v");
  TileRing ld_ring(kb, Space::SBUF, {128, n.d}, dt, 4 * g, "attention.load");
  TileRing kblk_ring(kb, Space::SBUF, {128, kvb / 128 * n.d}, dt, 2 * g, "attention.k");
  TileRing qt_ring(kb, Space::SBUF, {128, kQTile}, dt, 2 * g, "attention.qT");
  TileRing tps_ring(kb, Space::PSUM, {128, kvb}, DType::F32, kvb < kKvBlock ? 2 : 1, "attention.transpose");
  TileRing s_ring(kb, Space::PSUM, {128, kvb}, DType::F32, g, "attention.scores");
  TileRing sm_ring(kb, Space::SBUF, {128, kvb}, DType::F32, 2 * g, "attention.masked");
  std::optional<TileRing> mk_ring;
  if (masked) mk_ring.emplace(kb, Space::SBUF, std::vector<int64_t>{128, kvb}, DType::F32, g, "attention.mask");
  TileRing p_ring(kb, Space::SBUF, {128, kvb}, pdt, 2 * g, "attention.p");
  TileRing pt_ring(kb, Space::SBUF, {128, kvb}, pdt, 2 * g, "attention.pT");
  // P^T in PSUM in P's dtype: bf16 fits two per bank, so a whole group's fit beside the scores.
  TileRing ptps_ring(kb, Space::PSUM, {128, kvb}, pdt, g, "attention.pT_psum");
  // After the bank-sized tiles, so the small ones pack into what is left (8 banks in all).
  TileRing pv_ring(kb, Space::PSUM, {128, n.d}, DType::F32, g, "attention.pv");
  TileRing acc_ring(kb, Space::SBUF, {128, n.d}, DType::F32, 2 * g, "attention.acc");
  TileRing o_ring(kb, Space::SBUF, {128, n.d}, dt, g, "attention.out");
  TileRing st_ring(kb, Space::SBUF, {128, kCols}, DType::F32, 2 * g, "attention.stats");

  // Causal masks for a diagonal block whose first key is `o` = 0/128/256/384 before the
  // query tile's first row: key j of the block is visible to row p iff j <= p + o.
  std::vector<Tile> masks;
  if (causal) {
    Tile idx = kb.sbuf_tile({128, kKvBlock}, DType::F32, "attention.iota");
    for (int64_t o = 0; o < kKvBlock; o += kQTile) {
      kb.iota(idx, static_cast<int32_t>(-o), -1, {1});  // j - p - o
      masks.push_back(kb.sbuf_tile({128, kKvBlock}, DType::F32, fmt::format("attention.mask{}", o)));
      kb.tensor_scalar(masks.back(), idx, AluOp::IsGt, 0.0f, AluOp::Mul, kMasked);
    }
    kb.free(idx);
  }

  int evac = 0;  // alternates PSUM evacuations between VectorE and ScalarE
  const Opts on_scalar{.engine = Engine::Scalar, .queue = -1, .name = ""};
  // Loads and stores on queues of their own: a load of the next group must not wait in a
  // queue behind a store that waits for this group's results.
  int n_loads = 0, n_stores = 0;
  auto load = [&](const View& dst, const View& src) {
    kb.load(dst, src, {.engine = std::nullopt, .queue = n_loads++ % kLoadQueues, .name = ""});
  };
  auto store = [&](const View& dst, const View& src) {
    kb.store(dst, src, {.engine = std::nullopt, .queue = kLoadQueues + n_stores++ % kStoreQueues, .name = ""});
  };
  // K^T and V of one head.
  auto load_head = [&](int64_t h, View& kT, View& vv) {
    kT = kt_ring.next();
    vv = v_ring.next();
    for (const Span& blk : split(n.sk, kKvBlock)) {
      View tps = corner(tps_ring.next(), n.d, blk.size);
      // The block's K and V in one DMA each for its whole key tiles (and one for a partial
      // last tile): a DMA per 128 keys would pay the fixed cost once per tile.
      const auto tiles = split(blk.size, 128);
      const int64_t whole = blk.size / 128, c0 = blk.begin / 128 * n.d;
      View kraw = corner(kblk_ring.next(), 128, static_cast<int64_t>(tiles.size()) * n.d);
      if (whole > 0) {
        load(kraw.slice({{0, 128}, {0, whole * n.d}}), tile_view(spec.k, h, blk.begin, whole, n.d));
        load(vv.slice({{0, 128}, {c0, c0 + whole * n.d}}), tile_view(spec.v, h, blk.begin, whole, n.d));
      }
      if (whole < static_cast<int64_t>(tiles.size())) {
        const Span last = tiles.back();
        const Span keys{blk.begin + last.begin, last.size};
        load(kraw.slice({{0, last.size}, {whole * n.d, (whole + 1) * n.d}}), spec.k.rows(h, keys.range(), {0, n.d}));
        load(vv.slice({{0, last.size}, {c0 + whole * n.d, c0 + (whole + 1) * n.d}}), spec.v.rows(h, keys.range(), {0, n.d}));
      }
      for (size_t i = 0; i < tiles.size(); ++i) {
        const int64_t c = static_cast<int64_t>(i) * n.d;
        kb.transpose(tps.slice({{0, n.d}, tiles[i].range()}), kraw.slice({{0, tiles[i].size}, {c, c + n.d}}));
      }
      kb.copy(kT.slice({{0, n.d}, blk.range()}), tps,
              Opts{.engine = (evac++ % 2) ? Engine::Scalar : Engine::Vector, .queue = -1, .name = ""});
    }
  };

  // Units of work: (head, query tile). Query tiles go in groups whose block steps interleave:
  // each tile's steps form a serial chain (the running max), so interleaving independent
  // chains keeps all engines busy; with cross_heads a group spans heads.
  struct Unit {
    int64_t h;
    Span rows;
  };
  std::vector<Unit> units;
  const auto q_tiles = split(n.sq, kQTile);
  for (int64_t h = h0; h < h1; ++h)
    for (const Span& r : q_tiles) units.push_back({h, r});
  const bool one_block = n.sk <= kKvBlock;
  int64_t loaded_head = -1;
  View cur_kT, cur_v;
  for (size_t g0 = 0; g0 < units.size();) {
    size_t g1 = g0 + 1;
    while (g1 < units.size() && g1 - g0 < group_size && (cross_heads || units[g1].h == units[g0].h)) ++g1;
    std::vector<QueryTile> group;
    std::vector<View> head_kT, head_v;
    for (size_t i = g0; i < g1; ++i) {
      if (units[i].h != loaded_head) {
        load_head(units[i].h, cur_kT, cur_v);
        loaded_head = units[i].h;
      }
      head_kT.push_back(cur_kT);
      head_v.push_back(cur_v);
    }
    for (size_t i = g0; i < g1; ++i) {
      QueryTile t;
      t.rows = units[i].rows;
      const int64_t h = units[i].h;
      const int64_t p = t.rows.size;
      View ql = corner(ld_ring.next(), p, n.d);
      load(ql, spec.q.rows(h, t.rows.range(), {0, n.d}));
      View qps = corner(tps_ring.next(), n.d, p);
      kb.transpose(qps, ql);
      t.qT = corner(qt_ring.next(), n.d, p);
      kb.copy(t.qT, qps, on_scalar);
      t.stats = st_ring.next();
      t.acc = corner(acc_ring.next(), p, n.d);
      if (!one_block) {
        kb.memset(t.stat(kMax0), -std::numeric_limits<float>::infinity());
        kb.memset(t.stat(kSum0), 0.0f);
        kb.memset(t.acc, 0.0f);
      }
      group.push_back(t);
    }
    // Software-pipelined over the group: every tile's scores and softmax first (phase A),
    // then every tile's P^T and P V (phase B). Each engine runs its stream in order, so this
    // order lets TensorE compute tile i+1's scores while ScalarE exponentiates tile i.
    for (const Span& blk : split(n.sk, kKvBlock)) {
      auto active = [&](const QueryTile& t) { return !(causal && blk.begin > t.rows.end() - 1); };
      std::vector<std::pair<std::pair<int64_t, int64_t>, View>> masks_here;  // a mask shared by heads loads once
      // Phase A in sweeps, one engine's step for every tile of the group at a time, so that
      // no in-order stream waits on one tile's chain while another tile's step is ready:
      // TensorE scores; ScalarE scale (with a mask); VectorE mask and row max; ScalarE exp.
      std::vector<View> scores(group.size());
      for (size_t gi = 0; gi < group.size(); ++gi) {
        QueryTile& t = group[gi];
        if (!active(t)) continue;  // every key of the block is after every query of the tile
        scores[gi] = corner(s_ring.next(), t.rows.size, blk.size);
        kb.matmul(scores[gi], t.qT, head_kT[gi].slice({{0, n.d}, blk.range()}));
      }
      std::vector<View> mks(group.size());
      for (size_t gi = 0; gi < group.size(); ++gi) {
        QueryTile& t = group[gi];
        if (!active(t) || !masked) continue;
        // scale * S (ScalarE, from PSUM); the mask (one load for the heads that share it).
        const int64_t h = units[g0 + gi].h, p = t.rows.size;
        const std::pair<int64_t, int64_t> key{spec.mask->head_offset(h) + t.rows.begin * spec.mask->row_stride, p};
        for (const auto& [k, v] : masks_here)
          if (k == key) mks[gi] = v;
        if (mks[gi].buffer() < 0) {
          mks[gi] = corner(mk_ring->next(), p, blk.size);
          load(mks[gi], spec.mask->rows(h, t.rows.range(), blk.range()));
          masks_here.emplace_back(key, mks[gi]);
        }
        View sm = corner(sm_ring.next(), p, blk.size);
        kb.activation(sm, scores[gi], ActFunc::Copy, scale);
        scores[gi] = sm;
      }
      for (size_t gi = 0; gi < group.size(); ++gi) {
        QueryTile& t = group[gi];
        if (!active(t)) continue;
        const int64_t p = t.rows.size;
        const bool diagonal = causal && blk.end() > t.rows.begin;
        if (masked) kb.tensor_tensor(scores[gi], scores[gi], mks[gi], AluOp::Add);
        if (diagonal) {
          View sm = masked ? scores[gi] : corner(sm_ring.next(), p, blk.size);
          kb.tensor_tensor(sm, scores[gi], corner(masks[(t.rows.begin - blk.begin) / kQTile], p, blk.size), AluOp::Add);
          scores[gi] = sm;
        }
        if (one_block && exp_scale == 1.0f) {
          kb.reduce(t.stat(kNegMax), scores[gi], AluOp::Max, 1, true);  // -max
          continue;
        }
        kb.reduce(t.stat(kBlockMax), scores[gi], AluOp::Max);
        if (one_block) {
          kb.tensor_scalar(t.stat(kNegMax), t.stat(kBlockMax), AluOp::Mul, -exp_scale);
          continue;
        }
        const int nxt = 1 - t.cur;
        kb.tensor_scalar(t.stat(kMax0 + nxt), t.stat(kBlockMax), AluOp::Mul, exp_scale, AluOp::Max, t.stat(kMax0 + t.cur));
        kb.tensor_scalar(t.stat(kNegMax), t.stat(kMax0 + nxt), AluOp::Mul, -1.0f);
      }
      for (size_t gi = 0; gi < group.size(); ++gi) {
        QueryTile& t = group[gi];
        if (!active(t)) continue;
        // One key block: no running max to merge (the general steps would compute alpha = 0,
        // sum = rowsum, acc = P V exactly): exp(scale * s - max) with its row sum.
        View rowsum = t.stat(kRowSum);
        if (!one_block) kb.activation(t.stat(kAlpha), t.stat(kMax0 + t.cur), ActFunc::Exp, 1.0f, t.stat(kNegMax));
        t.p = corner(p_ring.next(), t.rows.size, blk.size);
        kb.activation(t.p, scores[gi], ActFunc::Exp, exp_scale, t.stat(kNegMax), &rowsum);
      }
      for (size_t gi = 0; gi < group.size() && !one_block; ++gi) {
        QueryTile& t = group[gi];
        if (!active(t)) continue;
        const int nxt = 1 - t.cur;
        kb.tensor_scalar(t.stat(kSum0 + nxt), t.stat(kSum0 + t.cur), AluOp::Mul, t.stat(kAlpha), AluOp::Add, t.stat(kRowSum));
        t.cur = nxt;
      }
      // Phase B in three sweeps, so that no engine's in-order stream blocks on one tile
      // while another tile's work is ready: TensorE transposes every tile's P (128 keys
      // per PSUM column group), VectorE and ScalarE take turns copying P^T out of PSUM,
      // then TensorE accumulates every tile's P V and VectorE rescales the accumulators.
      const auto sub = split(blk.size, 128);
      for (QueryTile& t : group) {
        if (!active(t)) continue;
        const int64_t p = t.rows.size, width = static_cast<int64_t>(sub.size()) * p;
        t.pT_psum = corner(ptps_ring.next(), 128, width);
        for (size_t j = 0; j < sub.size(); ++j)
          kb.transpose(t.pT_psum.slice({{0, sub[j].size}, {int64_t(j) * p, int64_t(j + 1) * p}}),
                       t.p.slice({{0, p}, sub[j].range()}));
      }
      for (QueryTile& t : group) {
        if (!active(t)) continue;
        const int64_t width = static_cast<int64_t>(sub.size()) * t.rows.size;
        t.pT = corner(pt_ring.next(), sub[0].size, width);
        kb.copy(t.pT, t.pT_psum.slice({{0, sub[0].size}, {0, width}}),
                Opts{.engine = (evac++ % 2) ? Engine::Scalar : Engine::Vector, .queue = -1, .name = ""});
      }
      for (size_t gi = 0; gi < group.size(); ++gi) {
        QueryTile& t = group[gi];
        if (!active(t)) continue;
        const int64_t p = t.rows.size;
        View pv = corner(pv_ring.next(), p, n.d);
        for (size_t j = 0; j < sub.size(); ++j) {
          const int64_t tile = (blk.begin + sub[j].begin) / 128;
          kb.matmul(pv, t.pT.slice({{0, sub[j].size}, {int64_t(j) * p, int64_t(j + 1) * p}}),
                    head_v[gi].slice({{0, sub[j].size}, {tile * n.d, (tile + 1) * n.d}}), j == 0, j + 1 == sub.size());
        }
        if (one_block) {
          t.acc = pv;  // normalised straight from PSUM below
          continue;
        }
        kb.tensor_scalar(t.acc, t.acc, AluOp::Mul, t.stat(kAlpha));
        kb.tensor_tensor(t.acc, t.acc, pv, AluOp::Add);
      }
    }
    for (size_t gi = 0; gi < group.size(); ++gi) {
      QueryTile& t = group[gi];
      kb.tensor_scalar(t.stat(kRecip), t.stat(one_block ? kRowSum : kSum0 + t.cur), AluOp::Div, 1.0f, AluOp::Bypass, 0.0f, true);
      View o = corner(o_ring.next(), t.rows.size, n.d);
      kb.activation(o, t.acc, ActFunc::Copy, t.stat(kRecip));  // ScalarE: out = acc / l
      store(spec.out.rows(units[g0 + gi].h, t.rows.range(), {0, n.d}), o);
    }
    g0 = g1;
  }
  for (const Tile& m : masks) kb.free(m);
}

KernelDef attention_def() {
  KernelDef k;
  k.name = "attention";
  k.description = "fused flash-style attention forward, q/k/v/out [heads, seq, head_dim] (--causal)";
  k.params = {{"heads", "attention heads", KernelParam::Kind::Int, 2, 1, 1 << 16, {}},
              {"seq", "sequence length (queries = keys)", KernelParam::Kind::Int, 1024, 1, 1 << 20, {}},
              {"head-dim", "head dimension (<= 128)", KernelParam::Kind::Int, 128, 1, 128, {}},
              {"causal", "mask keys after each query", KernelParam::Kind::Flag, 0, 0, 1, {}}};
  k.dtypes = {DType::BF16, DType::F32};
  k.build = [](const hw::ChipSpec& chip, const KernelArgs& a) {
    KernelBuilder kb(chip);
    kb.set_name(fmt::format("attention{}_{}x{}x{}_{}", a.flag("causal") ? "_causal" : "", a.i("heads"),
                            a.i("seq"), a.i("head-dim"), numerics::name(a.dtype)));
    std::vector<int64_t> shape{a.i("heads"), a.i("seq"), a.i("head-dim")};
    auto q = kb.hbm_input("q", shape, a.dtype);
    auto kk = kb.hbm_input("k", shape, a.dtype);
    auto v = kb.hbm_input("v", shape, a.dtype);
    auto out = kb.hbm_output("out", shape, a.dtype);
    attention(kb, q, kk, v, out, a.flag("causal"));
    return kb.build();
  };
  k.reference = [](const KernelArgs& a, const Tensors& in) {
    const int64_t H = a.i("heads"), S = a.i("seq"), D = a.i("head-dim");
    const bool causal = a.flag("causal");
    const double scale = 1.0 / std::sqrt(double(D));
    const auto &q = in.at("q"), &k = in.at("k"), &v = in.at("v");
    std::vector<double> out(q.size(), 0.0), s(S);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t base = h * S * D;
      for (int64_t i = 0; i < S; ++i) {
        const int64_t keys = causal ? i + 1 : S;
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < keys; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += double(q[base + i * D + d]) * k[base + j * D + d];
          s[j] = scale * dot;
          m = std::max(m, s[j]);
        }
        for (int64_t j = 0; j < keys; ++j) l += (s[j] = std::exp(s[j] - m));
        for (int64_t j = 0; j < keys; ++j)
          for (int64_t d = 0; d < D; ++d) out[base + i * D + d] += s[j] / l * v[base + j * D + d];
      }
    }
    return ReferenceOutputs{{"out", std::move(out)}};
  };
  // fp32: scores and P V accumulate in fp32 PSUM. bf16: P is rounded to bf16 before P V
  // (2^-9 relative per weight) and the output to bf16; outputs are averages of values in
  // [-1, 1], so an absolute bound is the meaningful one.
  k.tolerance = [](const KernelArgs& a) {
    return a.dtype == DType::F32 ? Tolerance{2e-5, 1e-4} : Tolerance{1e-2, 1e-2};
  };
  return k;
}

}  // namespace trnsim::kernels
