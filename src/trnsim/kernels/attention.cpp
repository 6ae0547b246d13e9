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
constexpr float kMasked = -1e30f;    // exp(scale * (s + kMasked) - m) == 0 in fp32
constexpr int kLoadQueues = 12, kStoreQueues = 4;  // of the builder's 16 DMA queues
enum Col : int64_t { kMax0 = 0, kSum0 = 2, kNegMax = 4, kBlockMax = 5, kAlpha = 6, kRowSum = 7,
                     kRecip = 8, kCols = 9 };

// Query tiles whose block steps interleave: 4, or 2 for fp32, whose P^T tiles take a whole
// PSUM bank each (a group's P^T must all be live at once; PSUM has 8 banks).
constexpr size_t kGroup = 4;

// One query tile in flight: its Q^T, running statistics (ping-pong max/sum columns) and output
// accumulator.
struct QueryTile {
  int64_t head = 0;
  const Tile* kT = nullptr;  // this tile's head's K^T and V (the resident chunk)
  const Tile* vv = nullptr;
  Span rows;
  View qT;
  Tile stats;
  View acc;
  View s;       // this block's scores (PSUM, then scaled and masked in SBUF)
  View mk;      // its additive mask
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
  // K^T (keys per partition) and V (key tiles x head_dim) stay in SBUF while query tiles use
  // them. When one head's K/V do not fit, keys go in chunks (flash attention over the
  // sequence): each query group streams the chunks, the running max and sum carry across.
  const DType pdt = dt == DType::F32 ? DType::F32 : DType::BF16;  // P feeds TensorE
  const int64_t psz = static_cast<int64_t>(numerics::storage_bytes(pdt, 1));
  // Block-wide tiles only as wide as a block can be. Short sequences (a block of at most 256
  // keys) take a fraction of a PSUM bank per tile: twice as many tiles interleave when the
  // group's PSUM tiles still fit. A decode step (K^T from the cache) keeps its groups.
  const int64_t kvb = std::min<int64_t>(kKvBlock, (n.sk + 127) / 128 * 128);
  auto psum_bytes = [&](int64_t gs) {  // transposes, scores, P^T, P V
    return 2 * kvb * 4 + gs * (kvb * 4 + kvb * psz + n.d * 4);
  };
  const size_t base_group = pdt == DType::F32 ? 2 : kGroup;
  const bool wide = !spec.k_transposed && kvb <= 256 &&
                    psum_bytes(2 * static_cast<int64_t>(base_group)) <=
                        static_cast<int64_t>(kb.chip().core.psum.bytes_per_partition.value());
  const size_t group_size = base_group * (wide ? 2 : 1);
  const int g = static_cast<int>(group_size);
  // SBUF per partition of the block-level tiles below (rings of a group's query tiles, the
  // causal masks), and a sixteenth kept free for alignment; the rest holds K^T and V.
  const int64_t block_bytes = 2 * g * (kQTile * dsz + kvb * (4 + 2 * psz) + n.d * 4 + kCols * 4) +
                              g * (n.d * dsz + (masked ? kvb * 4 : 0)) + 4 * g * n.d * dsz +
                              (causal ? 5 * kKvBlock * 4 : 0);
  const int64_t sbuf = static_cast<int64_t>(kb.chip().core.sbuf.bytes_per_partition.value());
  const int64_t avail = sbuf - sbuf / 16 - block_bytes;
  auto kv_bytes = [&](int64_t keys) { return (keys + (keys + 127) / 128 * n.d) * dsz; };
  // A decode step (one query tile per head) reuses no K/V across tiles: its keys stream in
  // chunks sized so that a group of heads is double-buffered, the next chunks loading while
  // this one computes. Otherwise a head's K/V stay resident when they fit.
  const int64_t q_tiles_per_head = (n.sq + kQTile - 1) / kQTile;
  const int64_t heads_here = std::max<int64_t>(1, (spec.head_end < 0 ? n.heads : spec.head_end) - spec.head_begin);
  const int64_t stream_heads = q_tiles_per_head == 1 ? std::min<int64_t>({heads_here, kGroup, g}) : 1;
  int64_t chunk = n.sk;
  if (kv_bytes(n.sk) * (q_tiles_per_head == 1 ? 2 * stream_heads : 1) > avail) {  // double-buffered chunks of whole key blocks
    chunk = avail / (2 * stream_heads) / (dsz * (128 + n.d)) * 128 / kKvBlock * kKvBlock;
    if (chunk < kKvBlock && stream_heads > 1) chunk = avail / 2 / (dsz * (128 + n.d)) * 128 / kKvBlock * kKvBlock;
    if (chunk < kKvBlock)
      throw ShapeError(fmt::format("attention: SBUF of {} KiB per partition has no room for a {}-key block of K^T "
                                   "and V beside the {} KiB of working tiles", sbuf / 1024, kKvBlock, block_bytes / 1024));
  }
  const auto chunks = split(n.sk, chunk);
  const int64_t nkt = (chunk + 127) / 128;
  // Ring depth: as many heads' K/V as fit, up to two groups' worth (one computing, the next
  // one loading).
  const int kv_depth = static_cast<int>(std::clamp<int64_t>(avail / kv_bytes(chunk), 1, 2 * static_cast<int64_t>(g)));
  TileRing kt_ring(kb, Space::SBUF, {128, chunk}, dt, kv_depth, "attention.kT");
  TileRing v_ring(kb, Space::SBUF, {128, nkt * n.d}, dt, kv_depth, "attention.v");
  // Heads whose query tiles share a group (a decode step's sequences: one tile each); each
  // keeps four K tile loads in flight, so a group's heads stream their caches side by side.
  const int64_t group_heads = std::clamp<int64_t>(g / q_tiles_per_head, 1, std::max(1, kv_depth / 2));
  TileRing ld_ring(kb, Space::SBUF, {128, n.d}, dt, 2 * g, "attention.load");  // Q tiles
  // A key block of K as loaded (keys on partitions), before its transpose; with the Q loads
  // (ld_ring) it takes the 4 * g head_dim columns counted in block_bytes.
  std::optional<TileRing> kblk_ring;
  if (!spec.k_transposed)
    kblk_ring.emplace(kb, Space::SBUF, std::vector<int64_t>{128, kvb / 128 * n.d}, dt,
                      static_cast<int>(std::max(1, g / 2) * (kKvBlock / kvb)), "attention.k");
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
  // queue behind a store that waits for this group's results. A decode step (K^T from the
  // cache) keeps the builder's queues: its cost grids were fit to them (see llm_node_cost).
  int n_loads = 0, n_stores = 0;
  auto load = [&](const View& dst, const View& src) {
    if (spec.k_transposed) kb.load(dst, src);
    else kb.load(dst, src, {.engine = std::nullopt, .queue = n_loads++ % kLoadQueues, .name = ""});
  };
  auto store = [&](const View& dst, const View& src) {
    if (spec.k_transposed) return kb.store(dst, src);
    kb.store(dst, src, {.engine = std::nullopt, .queue = kLoadQueues + n_stores++ % kStoreQueues, .name = ""});
  };
  // K^T and V of head h, keys `keys` (a chunk), into the next ring slots.
  auto load_kv = [&](int64_t h, Span keys) {
    const Tile& kT = kt_ring.next();
    const Tile& vv = v_ring.next();
    for (const Span& blk : split(keys.size, kKvBlock)) {
      const Range abs_blk{keys.begin + blk.begin, keys.begin + blk.end()};
      // The block's K and V in one DMA each for its whole key tiles (and one for a partial
      // last tile): a DMA per 128 keys would pay the fixed cost once per tile.
      const auto tiles = split(blk.size, 128);
      const int64_t whole = blk.size / 128, c0 = blk.begin / 128 * n.d;
      auto load_tiles = [&](const AttentionOperand& o, const View& dst) {  // dst: [128, tiles * d]
        if (whole > 0)
          load(dst.slice({{0, 128}, {0, whole * n.d}}), tile_view(o, h, abs_blk.begin, whole, n.d));
        if (whole < static_cast<int64_t>(tiles.size())) {
          const Span last = tiles.back();
          load(dst.slice({{0, last.size}, {whole * n.d, (whole + 1) * n.d}}),
               o.rows(h, {abs_blk.begin + last.begin, abs_blk.begin + last.end()}, {0, n.d}));
        }
      };
      if (spec.k_transposed) {  // K^T straight from the cache: head_dim rows of the block's keys
        // V a DMA per 128 keys: one per block would leave a few heads' streams on few queues.
        for (const Span& t : tiles)
          load(vv.slice({{0, t.size}, {(blk.begin + t.begin) / 128 * n.d, (blk.begin + t.begin) / 128 * n.d + n.d}}),
               spec.v.rows(h, {abs_blk.begin + t.begin, abs_blk.begin + t.end()}, {0, n.d}));
        load(kT.slice({{0, n.d}, blk.range()}), spec.k.rows(h, {0, n.d}, abs_blk));
        continue;
      }
      load_tiles(spec.v, vv.slice({{0, 128}, {c0, c0 + static_cast<int64_t>(tiles.size()) * n.d}}));
      View tps = corner(tps_ring.next(), n.d, blk.size);
      View kraw = corner(kblk_ring->next(), 128, static_cast<int64_t>(tiles.size()) * n.d);
      load_tiles(spec.k, kraw);
      for (size_t i = 0; i < tiles.size(); ++i) {
        const int64_t c = static_cast<int64_t>(i) * n.d;
        kb.transpose(tps.slice({{0, n.d}, tiles[i].range()}), kraw.slice({{0, tiles[i].size}, {c, c + n.d}}));
      }
      kb.copy(kT.slice({{0, n.d}, blk.range()}), tps,
              Opts{.engine = (evac++ % 2) ? Engine::Scalar : Engine::Vector, .queue = -1, .name = ""});
    }
    return std::pair<const Tile*, const Tile*>{&kT, &vv};
  };
  const bool one_block = n.sk <= kKvBlock;
  auto start_tile = [&](int64_t h, Span rows) {
    QueryTile t;
    t.head = h;
    t.rows = rows;
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
    return t;
  };
  // The block steps of a group against keys `keys` (chunk-relative block offsets: each tile's
  // K^T and V hold that chunk).
  auto run_blocks = [&](std::vector<QueryTile>& group, Span keys) {
      for (const Span& blk : split(keys.size, kKvBlock)) {
        const Range kr{keys.begin + blk.begin, keys.begin + blk.end()};  // absolute keys
        auto active = [&](const QueryTile& t) { return !(causal && kr.begin > t.rows.end() - 1); };
        // Phase A in sweeps, one engine's step for every tile of the group at a time, so that
        // no in-order stream waits on one tile's chain while another tile's step is ready:
        // TensorE scores; ScalarE scale (with a mask); VectorE mask and row max; ScalarE exp.
        for (QueryTile& t : group) {
          if (!active(t)) continue;  // every key of the block is after every query of the tile
          t.s = corner(s_ring.next(), t.rows.size, blk.size);
          kb.matmul(t.s, t.qT, t.kT->slice({{0, n.d}, blk.range()}));
        }
        // A mask shared by several heads (same rows, e.g. BERT's padding mask) loads once.
        std::vector<std::pair<std::pair<int64_t, int64_t>, View>> masks_here;
        for (QueryTile& t : group) {
          if (!active(t) || !masked) continue;
          const int64_t p = t.rows.size;
          const std::pair<int64_t, int64_t> key{spec.mask->head_offset(t.head) + t.rows.begin * spec.mask->row_stride, p};
          bool found = false;
          for (const auto& [k, v] : masks_here)
            if (k == key) t.mk = v, found = true;
          if (!found) {
            t.mk = corner(mk_ring->next(), p, blk.size);
            load(t.mk, spec.mask->rows(t.head, t.rows.range(), kr));
            masks_here.emplace_back(key, t.mk);
          }
          View sm = corner(sm_ring.next(), p, blk.size);
          kb.activation(sm, t.s, ActFunc::Copy, scale);  // scale * S out of PSUM (ScalarE)
          t.s = sm;
        }
        for (QueryTile& t : group) {
          if (!active(t)) continue;
          const int64_t p = t.rows.size;
          if (masked) kb.tensor_tensor(t.s, t.s, t.mk, AluOp::Add);
          if (causal && kr.end > t.rows.begin) {  // the diagonal block
            View sm = masked ? t.s : corner(sm_ring.next(), p, blk.size);
            kb.tensor_tensor(sm, t.s, corner(masks[(t.rows.begin - kr.begin) / kQTile], p, blk.size), AluOp::Add);
            t.s = sm;
          }
          if (one_block && exp_scale == 1.0f) {
            kb.reduce(t.stat(kNegMax), t.s, AluOp::Max, 1, true);  // -max
            continue;
          }
          kb.reduce(t.stat(kBlockMax), t.s, AluOp::Max);
          if (one_block) {
            kb.tensor_scalar(t.stat(kNegMax), t.stat(kBlockMax), AluOp::Mul, -exp_scale);
            continue;
          }
          const int nxt = 1 - t.cur;
          kb.tensor_scalar(t.stat(kMax0 + nxt), t.stat(kBlockMax), AluOp::Mul, exp_scale, AluOp::Max, t.stat(kMax0 + t.cur));
          kb.tensor_scalar(t.stat(kNegMax), t.stat(kMax0 + nxt), AluOp::Mul, -1.0f);
        }
        for (QueryTile& t : group) {
          if (!active(t)) continue;
          // One key block: no running max to merge (the general steps would compute alpha = 0,
          // sum = rowsum, acc = P V exactly): exp(scale * s - max) with its row sum.
          View rowsum = t.stat(kRowSum);
          if (!one_block) kb.activation(t.stat(kAlpha), t.stat(kMax0 + t.cur), ActFunc::Exp, 1.0f, t.stat(kNegMax));
          t.p = corner(p_ring.next(), t.rows.size, blk.size);
          kb.activation(t.p, t.s, ActFunc::Exp, exp_scale, t.stat(kNegMax), &rowsum);
        }
        for (QueryTile& t : group) {
          if (!active(t) || one_block) continue;
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
        for (QueryTile& t : group) {
          if (!active(t)) continue;
          const int64_t p = t.rows.size;
          View pv = corner(pv_ring.next(), p, n.d);
          for (size_t j = 0; j < sub.size(); ++j) {
            const int64_t tile = (blk.begin + sub[j].begin) / 128;
            kb.matmul(pv, t.pT.slice({{0, sub[j].size}, {int64_t(j) * p, int64_t(j + 1) * p}}),
                      t.vv->slice({{0, sub[j].size}, {tile * n.d, (tile + 1) * n.d}}), j == 0, j + 1 == sub.size());
          }
          if (one_block) {
            t.acc = pv;  // normalised straight from PSUM below
            continue;
          }
          kb.tensor_scalar(t.acc, t.acc, AluOp::Mul, t.stat(kAlpha));
          kb.tensor_tensor(t.acc, t.acc, pv, AluOp::Add);
        }
      }
  };
  auto finish = [&](std::vector<QueryTile>& group) {
      for (QueryTile& t : group) {
        kb.tensor_scalar(t.stat(kRecip), t.stat(one_block ? kRowSum : kSum0 + t.cur), AluOp::Div, 1.0f, AluOp::Bypass, 0.0f, true);
        View o = corner(o_ring.next(), t.rows.size, n.d);
        kb.activation(o, t.acc, ActFunc::Copy, t.stat(kRecip));  // ScalarE: out = acc / l
        store(spec.out.rows(t.head, t.rows.range(), {0, n.d}), o);
      }
  };

  // Query tiles of consecutive heads go in groups whose block steps interleave (each tile's
  // steps are a serial chain, the running max): a decode step's heads (one tile each) then run
  // side by side, their K/V loads in flight together. A group holds the tiles of at most
  // kv_depth / 2 heads (the next K/V load into the other half), or of one head.
  const auto q_tiles = split(n.sq, kQTile);
  std::vector<std::vector<std::pair<int64_t, Span>>> plan(1);
  int64_t heads_in_group = 0;
  for (int64_t h = h0; h < h1; ++h)
    for (const Span& rows : q_tiles) {
      const bool new_head = plan.back().empty() || plan.back().back().first != h;
      if (plan.back().size() == group_size || (new_head && heads_in_group == group_heads)) {
        plan.emplace_back();
        heads_in_group = 0;
      }
      if (plan.back().empty() || plan.back().back().first != h) ++heads_in_group;
      plan.back().push_back({h, rows});
    }
  // Only with K^T from the cache (DMA alone): a K to transpose would put the next group's
  // transposes and copies ahead of this group's steps in the in-order engine streams, where
  // they wait on their loads (BERT-base layer: 102 us pipelined, 87 us not). Loads on their
  // own queues start early anyway.
  const bool pipelined = kv_depth >= 2 * group_heads && kv_depth >= 2 && spec.k_transposed;
  if (chunks.size() == 1) {
    // Software-pipelined: the next group's K/V loads and query tiles are issued before this
    // group's block steps (needs the ring slots of two groups).
    std::pair<const Tile*, const Tile*> kv{nullptr, nullptr};
    auto build = [&](const std::vector<std::pair<int64_t, Span>>& spec_tiles) {
      std::vector<QueryTile> group;
      for (const auto& [h, rows] : spec_tiles) {
        if (rows.begin == 0) kv = load_kv(h, chunks[0]);
        QueryTile t = start_tile(h, rows);
        std::tie(t.kT, t.vv) = kv;
        group.push_back(t);
      }
      return group;
    };
    std::vector<QueryTile> next = build(plan[0]);
    for (size_t i = 0; i < plan.size(); ++i) {
      std::vector<QueryTile> group = std::move(next);
      if (pipelined && i + 1 < plan.size()) next = build(plan[i + 1]);
      run_blocks(group, chunks[0]);
      finish(group);
      if (!pipelined && i + 1 < plan.size()) next = build(plan[i + 1]);
    }
  } else {
    // Keys in chunks: each group streams them; with a transposed K cache (pure DMA loads) the
    // next chunk of the group's heads loads while this one computes.
    using ChunkKv = std::vector<std::pair<int64_t, std::pair<const Tile*, const Tile*>>>;
    for (const auto& spec_tiles : plan) {
      std::vector<QueryTile> group;
      for (const auto& [h, rows] : spec_tiles) group.push_back(start_tile(h, rows));
      auto load_chunk = [&](const Span& c) {
        ChunkKv kv;
        for (const QueryTile& t : group)
          if (kv.empty() || kv.back().first != t.head) kv.push_back({t.head, load_kv(t.head, c)});
        return kv;
      };
      size_t last = chunks.size();  // causal: chunks wholly after every query are skipped
      while (causal && last > 1 && chunks[last - 1].begin > group.back().rows.end() - 1) --last;
      const bool prefetch = pipelined;
      ChunkKv cur = load_chunk(chunks[0]), nxt;
      for (size_t ci = 0; ci < last; ++ci) {
        if (prefetch && ci + 1 < last) nxt = load_chunk(chunks[ci + 1]);
        for (QueryTile& t : group)
          for (const auto& [h, p] : cur)
            if (h == t.head) std::tie(t.kT, t.vv) = p;
        run_blocks(group, chunks[ci]);
        if (ci + 1 < last) cur = prefetch ? nxt : load_chunk(chunks[ci + 1]);
      }
      finish(group);
    }
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
