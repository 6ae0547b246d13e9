#include "trnsim/compiler/lower_matmul.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

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

constexpr int64_t kTileN = 512;          // one PSUM bank of fp32: a matmul's moving width
constexpr int64_t kMaxBlockBytes = 4096; // per partition per weight DMA: where DMA saturates
constexpr int64_t kRawCols = 1024;       // row-major A: columns per load (4 KiB of fp32)
// DMA queues by role. One transfer of 128 partitions already spans all 16 DMA engines, so a
// few queues keep the core's DMA bandwidth busy while their fixed costs overlap; operands
// on queues of their own arrive in the order TensorE needs them instead of all at once.
constexpr int64_t kFewRows = 64;  // rows of A below which a matmul only streams its weight
constexpr int kQueueA = 0, kQueuesA = 2, kQueueOperand = 2, kQueueB = 3;
struct Queues {
  int b, store, stores;
};
// A streamed weight gets ten of the sixteen queues: it is the whole kernel's traffic, and each
// 4 KiB-per-partition load pays ~1.3 us fixed, so many must be in flight. A resident block
// keeps four (more of them in flight delay the A loads TensorE waits on) unless A is a few
// rows (decode), when the weight is again all the traffic.
Queues queues(bool weight_bound) { return weight_bound ? Queues{10, 13, 3} : Queues{4, 7, 4}; }

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
  bool b_per_batch = false;            // B is the same for every batch index (a weight)
  int64_t a_bytes = 4;                 // bytes per element of A in HBM
  int ln = -1;                         // index of a fused LayerNorm in the epilogue (fusion.cpp)
  float ln_eps = 1e-5f;
  // A LayerNorm of A's rows before the matmul, without scale and shift (fuse_norm_prologue.h).
  bool pro = false;
  float pro_eps = 1e-5f;
  // Epilogue ops applied per block; a LayerNorm and what follows it run on the whole row.
  size_t block_epilogue() const { return ln < 0 ? epilogue.size() : static_cast<size_t>(ln); }
};

// One unit of work shared out to the cores: a batch index, a row tile, a column range. Every
// piece keeps the whole K reduction, so the result does not depend on the split.
struct Piece {
  int64_t bi;
  Span mt, cols;
};

// Pieces ordered (batch, column range, row tile), so that a core's contiguous share holds row
// tiles of the same columns. The cores split rows and columns two-dimensionally: with c column
// ranges each core reads its row tiles of A and 1/c of B, and c is chosen to minimise those
// bytes per core (all rows per core and 1/cores of B for a weight-streaming matmul at small M;
// rows only when A outweighs B).
std::vector<Piece> make_pieces(const LowerCtx& ctx, const MatmulJob& j) {
  const int64_t nb = numel(j.batch);
  const auto mtiles = kernels::split(j.m, 128);
  const int64_t row_units = nb * static_cast<int64_t>(mtiles.size());
  const double a_tile = 128.0 * static_cast<double>(j.k) * 4;  // one row tile of A (fp32)
  const double b_bytes = static_cast<double>(j.k * j.n) * numerics::info(j.dtype).bits / 8 * (j.b_per_batch ? 1 : nb);
  int64_t parts = 1;
  double best = -1;
  for (int64_t c = 1; c <= ctx.cores; ++c) {
    if (c > 1 && j.n / c < kMinColsPerCore) break;
    const double per_core = a_tile * static_cast<double>((row_units * c + ctx.cores - 1) / ctx.cores) +
                            b_bytes / static_cast<double>(c * (j.b_per_batch ? 1 : nb));
    if (best < 0 || per_core < best * 0.999) best = per_core, parts = c;
  }
  if (j.ln >= 0) parts = 1;  // a LayerNorm needs the whole row on one core
  // A weight shared by every batch index: its columns outermost, so one core's share (and one
  // group of resident A^T tiles) spans batch indices and reads each weight block once.
  std::vector<Piece> pieces;
  auto add = [&](int64_t bi, int64_t p) {
    const int64_t c0 = p * j.n / parts, c1 = (p + 1) * j.n / parts;
    for (const Span& mt : mtiles) pieces.push_back({bi, mt, {c0, c1 - c0}});
  };
  if (j.b_per_batch) {
    for (int64_t p = 0; p < parts; ++p)
      for (int64_t bi = 0; bi < nb; ++bi) add(bi, p);
  } else {
    for (int64_t bi = 0; bi < nb; ++bi)
      for (int64_t p = 0; p < parts; ++p) add(bi, p);
  }
  return pieces;
}

// SBUF per partition the kernel's rings take, as the NKI matmul sizes them: the stationary
// cache of A^T (every K tile of a group of row tiles, loaded once), a double-buffered block of
// B (every K tile of up to 4 KiB of columns, one DMA each), results and epilogue operands.
struct Budget {
  int64_t block_n = kTileN;  // columns of B per block (a multiple of 512, or all of N)
  int64_t group = 1;         // row tiles whose A^T stays resident
  bool cache = true;         // A^T cached (false: K too deep, reloaded per use)
  bool stream_b = false;     // K too deep for a double-buffered block: B tiles loaded per use
  int stream_depth = 4;      // B tiles in flight when streaming
  bool resident_b = false;   // the core's whole share of a weight B stays in SBUF, loaded once
  int64_t b_blocks = 0;      // blocks of B held when resident
  bool ws = false;           // streamed B read once per group of row tiles (weight-stationary)
};

// Weight-stationary streaming accumulates a group's row tiles at once: at most this many PSUM
// banks (of eight), leaving the rest to the A^T transposes and the next block.
constexpr int64_t kWsBanks = 4;

// Whether the first epilogue op can read the PSUM accumulator directly: a plain ALU op with
// its operand, or a ScalarE activation (not an integer op, not one that needs GpSimd).
bool fusable_on_evacuation(const std::vector<std::pair<Epilogue, SView>>& ep) {
  if (ep.empty()) return false;
  const OpKind op = ep.front().first.op;
  if (!ep.front().first.operand.empty()) return op == OpKind::Add || op == OpKind::Sub || op == OpKind::Mul;
  return op == OpKind::Gelu || op == OpKind::Relu || op == OpKind::Tanh || op == OpKind::Sigmoid;
}

// Epilogue operands broadcast along the rows (a bias): loaded once per block of columns.
bool row_operand(const std::pair<Epilogue, SView>& e, const TilePlan& p) {
  return !e.first.operand.empty() && p.row_stride[0] == 0 && p.col_stride[0] != 0 &&
         std::all_of(p.outer_strides[0].begin(), p.outer_strides[0].end(), [](int64_t x) { return x == 0; });
}


// Columns of one stationary (A^T) tile: the row tile's rows, not a full 128, so that a
// decode-shaped A (a few rows) stays resident for every K tile.
int64_t stationary_cols(const MatmulJob& j) { return std::min<int64_t>(128, j.m); }

// Buffers of the per-row-tile operand ring: two per such operand of the block's epilogue, so
// that a chain of several (an LSTM cell: x W + b, a gate, the other cell term) never overwrites
// one it has not read yet, and the next tile's loads still double-buffer. Row-broadcast
// operands (a bias) have a ring of their own.
int64_t operand_slots(const MatmulJob& j, int64_t row_operands) {
  int64_t n = 0;
  for (size_t e = 0; e < j.block_epilogue(); ++e) n += !j.epilogue[e].first.operand.empty();
  return 2 * std::max<int64_t>(1, n - row_operands);
}

// Rows [0, p) of x normalised over their `cols` columns into y (y may be x), as the library
// LayerNorm does it: bn_stats per 512 columns and bn_aggr on VectorE, rstd and the
// normalisation on ScalarE. st holds 3 statistics per 512 columns, mv four per row.
void normalise_rows(KernelBuilder& kb, const View& y, const View& x, const View& st, const View& mv, int64_t p, int64_t cols, float eps) {
  auto stat = [&](int64_t c) { return mv.slice({{0, p}, {c, c + 1}}); };
  int64_t nst = 0;
  for (const Span& c : kernels::split(cols, kTileN)) {
    kb.bn_stats(st.slice({{0, p}, {3 * nst, 3 * nst + 3}}), x.slice({{0, p}, {c.begin, c.end()}}));
    ++nst;
  }
  kb.bn_aggr(mv.slice({{0, p}, {0, 2}}), st.slice({{0, p}, {0, 3 * nst}}));
  kb.activation(stat(2), stat(1), ActFunc::Rsqrt, 1.0f, eps);
  kb.tensor_scalar(stat(3), stat(0), AluOp::Mul, stat(2), AluOp::Mul, -1.0f);
  kb.activation(y.slice({{0, p}, {0, cols}}), x.slice({{0, p}, {0, cols}}), ActFunc::Copy, stat(2), stat(3));
}

Budget plan_budget(KernelBuilder& kb, const MatmulJob& j, int64_t ks, int64_t max_cols, int64_t row_tiles,
                   const std::vector<int64_t>& share_cols, int64_t row_operands) {
  Budget b;
  const int64_t eb = numerics::info(j.dtype).bits / 8;
  // Half of SBUF at most: the other half belongs to the neighbouring node (sbuf_placement.h).
  const int64_t half = static_cast<int64_t>(kb.chip().core.sbuf.bytes_per_partition.value()) / 2;
  // A fused LayerNorm holds two fp32 rows, its scale and shift rows and a row-wide tmp pair.
  const int64_t ln_rows = (j.ln >= 0 ? 6 * 4 * max_cols + 4 * 64 : 0) +
                          (j.pro ? 2 * 4 * j.k + 4 * 64 : 0);  // a prologue's two fp32 rows and statistics
  const int64_t free = std::min(kb.sbuf_free_bytes_per_partition(), half) - ln_rows;
  // res (+ tmp, per-row-tile operands, row operands past the two counted before)
  const int64_t f32_rings = (j.ln >= 0 ? 1 : 4) +
                            (j.epilogue.empty() ? 0 : 2 + operand_slots(j, row_operands) + std::max<int64_t>(0, 2 * row_operands - 2));
  // Weight block: 2 x ks tiles of block_n columns; result rings: f32_rings x block_n x 4.
  const int64_t for_b = free * 5 / 10, for_a = free * 3 / 10;
  int64_t bn = std::min<int64_t>(kMaxBlockBytes / eb, for_b / (2 * ks * eb + f32_rings * 4));
  bn = std::max<int64_t>(kTileN, bn / kTileN * kTileN);
  b.block_n = std::min(bn, max_cols);
  b.stream_b = 2 * ks * std::min<int64_t>(kTileN, max_cols) * eb > for_b;
  if (b.stream_b) {
    // Streaming weights (deep K): each load is one K tile of up to 4 KiB per partition of
    // columns, as many in flight as the weight half of the budget holds.
    // The fp32 rings (results, operands, the bias rows' ring) and four weight tiles in flight
    // must fit the weight half: narrower blocks where they would not (VGG's classifier).
    const int64_t f32_per_col = 4 * (f32_rings + (row_operands ? 2 : 0));
    b.block_n = std::min(kMaxBlockBytes / eb, max_cols);
    while (b.block_n > kTileN && b.block_n * (f32_per_col + 4 * eb) > for_b) b.block_n /= 2;
    const int64_t slot = b.block_n * eb, results = f32_per_col * b.block_n;
    b.stream_depth = static_cast<int>(std::clamp<int64_t>((for_b - results) / slot, 4, 2 * ks));
  }
  // Each stationary tile takes at least one allocation granule (64 bytes per partition): a
  // few-row A over a very deep K (VGG's 25,088) is 196 granules, not 196 x 2 bytes.
  const int64_t per_row_tile = ks * std::max<int64_t>(stationary_cols(j) * eb, 64);
  // Row-major A: fp32 chunks (and their cast), or four chunks already at the operand width.
  const int64_t raw = j.a_bytes == eb ? 4 * std::min<int64_t>(kRawCols, j.k) * eb
                                      : 2 * std::min<int64_t>(kRawCols, j.k) * (4 + (eb < 4 ? eb : 0));
  // Two row tiles' A^T (the next one is built ahead), one when there is no next row tile.
  b.cache = (row_tiles > 1 ? 2 : 1) * per_row_tile + raw <= for_a;
  // With a LayerNorm every row tile of a group also holds its fp32 result row until the last block.
  const int64_t row_cost = per_row_tile + (j.ln >= 0 ? 4 * max_cols : 0);
  b.group = b.cache ? std::clamp<int64_t>((for_a - raw) / row_cost - 1, 1, row_tiles) : 1;
  // A weight that fits beside two row tiles of A^T stays resident, as the library kernel keeps
  // its stationary data: every block is loaded once and read by every row tile, instead of once
  // per group of row tiles. Row tiles then go one at a time, double-buffered.
  // A LayerNorm epilogue finishes a row tile across all its blocks: one row tile at a time.
  // Row tiles that all fit one group (an encoder at batch 1) hold the whole weight too when it
  // is most of the node's traffic (at least twice A's bytes): nothing re-reads it, but every
  // block can then load under the previous nodes, not two blocks ahead. (Otherwise the group
  // keeps sharing each block among its row tiles while A streams.)
  int64_t share_n = 0;
  for (int64_t c : share_cols) share_n += c;
  const bool weight_bound = share_n * eb >= 2 * std::min(row_tiles * 128, j.m) * j.a_bytes;
  const bool one_group = row_tiles <= b.group && (row_tiles > 1 || j.m >= kFewRows) && weight_bound;
  if (j.b_per_batch && (((row_tiles > b.group || j.ln >= 0) && row_tiles > 1) || one_group)) {
    // Resident blocks are not double-buffered: the block width needs no streaming budget.
    const int64_t bn_res = std::min(std::max<int64_t>(kTileN, std::min<int64_t>(kMaxBlockBytes / eb, bn)), max_cols);
    int64_t blocks = 0, cols = 0;  // over the core's column ranges; a partial block's tiles are its width
    for (int64_t c : share_cols) blocks += (c + bn_res - 1) / bn_res, cols += c;
    const int64_t rest = 2 * per_row_tile + raw + f32_rings * 4 * bn_res + std::max<int64_t>(2, blocks * row_operands) * 4 * bn_res;
    if (cols * ks * eb + rest <= free) {
      b.resident_b = true;
      b.stream_b = false;
      b.block_n = bn_res;
      b.b_blocks = blocks;
      b.cache = true;
      b.group = 1;
    }
  }
  // A streamed weight too big to stay resident (RoBERTa-large's 4096 x 1024 FFN-out: 8 MiB) was
  // read once per row tile. Weight-stationary instead: the A^T of a group of row tiles stays in
  // SBUF, each K tile of a 512-column block is loaded once and every row tile of the group
  // accumulates through it in its own PSUM bank, so the weight is read once per group.
  if (b.stream_b && !b.resident_b && j.b_per_batch && row_tiles > 1) {
    const int64_t bn_ws = std::min<int64_t>(kTileN, max_cols);
    const int64_t f32_per_col = 4 * (f32_rings + (row_operands ? 2 : 0));
    const int depth = static_cast<int>(std::min<int64_t>(8, 2 * ks));
    // Beside the group's A^T: the weight tiles in flight, the fp32 rings, the raw A chunks and
    // the two-tile ring of single stationary tiles (a granule each at least).
    const int64_t st_ring = 2 * std::max<int64_t>(stationary_cols(j) * eb, 64);
    const int64_t avail = free - depth * bn_ws * eb - f32_per_col * bn_ws - raw - st_ring;
    const int64_t g = std::min<int64_t>({row_tiles, kWsBanks, avail / row_cost - 1});
    if (g >= 2) {
      b.ws = true;
      b.block_n = bn_ws;
      b.stream_depth = depth;
      b.cache = true;
      b.group = g;
    }
  }
  return b;
}

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
  const int64_t nks = static_cast<int64_t>(ks.size());
  const std::vector<Piece> pieces = make_pieces(ctx, j);
  const int64_t eb = numerics::info(j.dtype).bits / 8;

  const bool upper = ctx.n.i("sbuf_upper", 0) != 0;
  auto run = [&](int64_t first, int64_t last) {
    // The upper half of SBUF: a placeholder holds the lower half for the kernel's lifetime.
    std::optional<kernels::TileScope> lower_half;
    if (upper) {
      lower_half.emplace(kb);
      const int64_t half = static_cast<int64_t>(kb.chip().core.sbuf.bytes_per_partition.value()) / 2;
      lower_half->sbuf({128, half / 4}, DType::F32, ctx.n.name + ".lower_half");
    }
    int64_t max_cols = 0, rows_here = 0;
    std::vector<int64_t> share_cols;  // sizes of the distinct column ranges of this share
    for (int64_t pi = first; pi < last; ++pi) {
      const Span& c = pieces[static_cast<size_t>(pi)].cols;
      max_cols = std::max(max_cols, c.size);
      if (pi == first || c.begin != pieces[static_cast<size_t>(pi - 1)].cols.begin) share_cols.push_back(c.size);
      ++rows_here;
    }
    int64_t n_row_operands = 0;
    for (size_t e = 0; e < j.block_epilogue(); ++e) n_row_operands += row_operand(j.epilogue[e], pe[e]);
    const Budget bud = plan_budget(kb, j, nks, max_cols, rows_here, share_cols, n_row_operands);
    const int64_t bn = bud.block_n;
    // A resident weight of at least twice A's bytes is most of the node's traffic, as when it streams.
    int64_t share_rows = 0, b_cols = 0;
    for (int64_t pi = first; pi < last; ++pi) share_rows += pieces[static_cast<size_t>(pi)].mt.size;
    for (int64_t c : share_cols) b_cols += c;
    const bool weight_bound = bud.resident_b && b_cols * eb >= 2 * share_rows * j.a_bytes;
    const Queues q = queues(bud.stream_b || j.m < kFewRows || weight_bound);
    int64_t na_loads = 0, nb_loads = 0, n_stores = 0, n_evac = 0;
    const LowerCtx::Resident* rout = ctx.resident_of(j.out.tensor);
    if (rout && !rout->producer) rout = nullptr;
    const bool rdirect = rout && rout->tile.dtype() == DType::F32;
    const int64_t slots = bud.group + (rows_here > 1 ? 1 : 0);  // row tiles of A^T held: the next one ahead
    const int st_depth = static_cast<int>(bud.cache && !a_rows ? nks * slots : 2);
    TileRing st(kb, isa::Space::SBUF, {128, stationary_cols(j)}, j.dtype, st_depth, ctx.n.name + ".stationary");
    // A resident in SBUF (sbuf_residency.h) is read where its producer left it: no load.
    const LowerCtx::Resident* ra = ctx.resident_of(j.a.tensor);
    if (ra && !a_rows) throw Error(fmt::format("lowering: resident A of node '{}' is not row-major", ctx.n.name));
    const DType a_dt = ra ? ra->tile.dtype() : ctx.hbm(j.a.tensor).dtype();
    TileRing araw(kb, isa::Space::SBUF, {128, std::min(kRawCols, j.k)}, a_dt == j.dtype ? j.dtype : DType::F32,
                  ra ? 1 : a_dt == j.dtype ? 4 : 2, ctx.n.name + ".a");
    // Row-major fp32 A is rounded to the operand dtype before its transposes (the same values
    // as rounding after them), so that TensorE transposes at the operand's rate, not fp32's.
    // An A already held at the operand width (operand_storage.h) loads as it is.
    const bool a_narrow = a_dt == j.dtype;
    const bool cast_a = a_rows && eb < 4 && (!a_narrow || j.pro);  // a prologue's rows are fp32
    // A LayerNorm prologue (its scale and shift are folded into B and the bias,
    // fuse_norm_prologue.h): each row tile of A is normalised on its rows, (x - mean) rstd
    // with per-row scalars, written at the operand width in place of the cast.
    std::optional<TileRing> pro_rows, pro_stat, pro_mv;
    if (j.pro) {
      if (!a_rows || j.k > kRawCols) throw Error(fmt::format("lowering: LayerNorm prologue of node '{}' needs row-major A of at most {} columns", ctx.n.name, kRawCols));
      const int64_t nst = (j.k + kTileN - 1) / kTileN;
      if (!cast_a) pro_rows.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, j.k}, DType::F32, 2, ctx.n.name + ".prologue");
      pro_stat.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, 3 * nst}, DType::F32, 2, ctx.n.name + ".prologue_stats");
      pro_mv.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, 4}, DType::F32, 2, ctx.n.name + ".prologue_mean_var");
    }
    std::optional<TileRing> acast;
    if (cast_a) acast.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, std::min(kRawCols, j.k)}, j.dtype, 2, ctx.n.name + ".a_cast");
    // Rows [0, p) of A's chunk x normalised over the row, at the operand width when A is cast.
    auto normalise = [&](const View& x, int64_t p) {
      const View y = kernels::corner(cast_a ? acast->next() : pro_rows->next(), p, j.k);
      normalise_rows(kb, y, x, pro_stat->next(), pro_mv->next(), p, j.k, j.pro_eps);
      return y;
    };
    // Transposes fill a PSUM bank (8 K tiles of bf16, 4 of fp32) before one copy evacuates
    // them, and a row tile's banks are all in flight, so that TensorE transposes back to back
    // while VectorE/ScalarE drain them.
    const DType tp_dt = a_rows && eb < 4 ? j.dtype : DType::F32;
    const int64_t per_evac = std::clamp<int64_t>(2048 / (numerics::info(tp_dt).bits / 8 * 128), 1, kRawCols / 128);
    const int64_t chunks = (j.k + kRawCols - 1) / kRawCols;
    const int tp_depth = static_cast<int>(std::clamp<int64_t>(chunks * (kRawCols / 128 / per_evac), 2, bud.stream_b ? 2 : 3));
    TileRing tp(kb, isa::Space::PSUM, {128, per_evac * 128}, tp_dt, tp_depth, ctx.n.name + ".aT");
    // Row-major A: the A^T tiles of a chunk side by side, so that one copy fills several.
    std::optional<TileRing> stc;
    if (a_rows && bud.cache)
      stc.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, (std::min(kRawCols, j.k) + 127) / 128 * stationary_cols(j)}, j.dtype,
                  static_cast<int>(chunks * slots), ctx.n.name + ".stationary_chunk");
    // Resident B: whole blocks in one ring, each range's partial last block in another of its
    // width, so that SBUF holds B's own columns and no padding.
    int64_t full_blocks = 0, rem_blocks = 0, rem_cols = 0;
    for (int64_t pi = first; pi < last; ++pi) {
      const Span& c = pieces[static_cast<size_t>(pi)].cols;
      if (pi != first && c.begin == pieces[static_cast<size_t>(pi - 1)].cols.begin) continue;
      full_blocks += c.size / bn;
      if (c.size % bn) ++rem_blocks, rem_cols = std::max(rem_cols, c.size % bn);
    }
    const int mv_depth = bud.stream_b ? bud.stream_depth : static_cast<int>((bud.resident_b ? std::max<int64_t>(1, full_blocks) : 2) * nks);
    TileRing mv(kb, isa::Space::SBUF, {128, bn}, j.dtype, mv_depth, ctx.n.name + ".moving");
    std::optional<TileRing> mv_rem;
    if (bud.resident_b && rem_blocks > 0)
      mv_rem.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, rem_cols}, j.dtype, static_cast<int>(rem_blocks * nks), ctx.n.name + ".moving_rem");
    std::map<int64_t, std::vector<View>> resident;  // resident B blocks by first column
    std::map<std::pair<size_t, int64_t>, View> resident_rows;  // with them, (epilogue, column) -> its row operand
    // Streaming accumulates every 512-column bank of a block at once (one B load per K tile
    // feeds them all): as many banks plus two, so the next block starts under the evacuation.
    const int64_t banks = (bn + kTileN - 1) / kTileN;
    TileRing acc(kb, isa::Space::PSUM, {128, std::min(j.n, kTileN)}, DType::F32,
                 bud.ws ? static_cast<int>(bud.group * banks + 2) : bud.stream_b ? static_cast<int>(banks + 2) : 4,
                 ctx.n.name + ".acc");
    // Results wait for their store DMA (~2 us): four in flight keep the evacuations going.
    TileRing res(kb, isa::Space::SBUF, {128, bn}, DType::F32, j.ln >= 0 ? 1 : 4, ctx.n.name + ".result");
    // A fused LayerNorm: the row tile's whole result, its statistics, and the scale and
    // shift rows after it (loaded once).
    const size_t pre = j.block_epilogue();
    std::optional<TileRing> rowbuf, lnstat, lnmv, lnop;
    const int64_t ln_chunks = (max_cols + kTileN - 1) / kTileN;
    if (j.ln >= 0) {
      rowbuf.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, max_cols}, DType::F32, static_cast<int>(slots), ctx.n.name + ".row");
      lnstat.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, 3 * ln_chunks}, DType::F32, 2, ctx.n.name + ".bn_stats");
      lnmv.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, 4}, DType::F32, 2, ctx.n.name + ".mean_var");
      lnop.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, max_cols}, DType::F32,
                   static_cast<int>(std::max<size_t>(1, j.epilogue.size() - pre - 1)), ctx.n.name + ".ln_operand");
    }
    std::map<size_t, View> ln_operands;  // epilogue index -> its row, loaded once
    std::optional<TileRing> opr, sopr, tmp, ablk;
    if (!a_rows && nks > 1 && (j.k / 128) * stationary_cols(j) * eb <= kMaxBlockBytes)
      ablk.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, (j.k / 128) * stationary_cols(j)}, j.dtype, static_cast<int>(bud.group + 1),
                   ctx.n.name + ".stationary_block");
    if (!j.epilogue.empty()) {
      opr.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, bn}, DType::F32, static_cast<int>(operand_slots(j, n_row_operands)), ctx.n.name + ".operand");
      tmp.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, j.ln >= 0 ? std::max(bn, max_cols) : bn}, DType::F32, 2, ctx.n.name + ".tmp");
      // Row-broadcast operands (a bias) live for a whole block: a ring of their own, so that
      // the per-row operands' loads never overwrite them.
      sopr.emplace(kb, isa::Space::SBUF, std::vector<int64_t>{128, bn}, DType::F32,
                   static_cast<int>(std::max<int64_t>(2, (bud.resident_b ? bud.b_blocks : 2) * n_row_operands)), ctx.n.name + ".operand_row");
    }

    auto cast = [&](const View& a) {
      View c = kernels::corner(acast->next(), a.partitions(), a.shape()[1]);
      if (n_evac++ % 2) kb.activation(c, a, ActFunc::Copy);
      else kb.copy(c, a);
      return c;
    };

    // A^T tiles of one row tile, all K: row-major A is loaded 1024 columns per DMA and
    // transposed on TensorE 128 x 128 at a time; otherwise each [K tile, M tile] is loaded.
    auto stationary = [&](int64_t bi, Span mt, std::vector<View>& out) {
      out.clear();
      const int64_t full = j.k / 128;  // whole K tiles: one DMA for all of them when small
      if (!a_rows && full > 1 && full * mt.size * eb <= kMaxBlockBytes) {
        // A decode-shaped A^T (a few columns per K tile) would cost one fixed-latency DMA per
        // K tile; a single DMA lays every whole K tile side by side instead.
        View blk = kernels::corner(ablk->next(), 128, full * mt.size);
        isa::AccessPattern src = ctx.view(j.a, pa_t, 0, bi, {0, 128}, mt).ap();
        if (src.ndims >= isa::kMaxFreeDims) throw UnsupportedError(fmt::format("unsupported: op MatMul (A view rank) at node '{}'", ctx.n.name));
        for (int d = src.ndims; d > 0; --d) src.dims[d] = src.dims[d - 1];
        src.dims[0] = {static_cast<int32_t>(128 * src.partition_stride), static_cast<int32_t>(full)};
        ++src.ndims;
        kb.load(blk, View(src, {128, full * mt.size}, -1), {.queue = kQueueA + static_cast<int>(na_loads++ % kQueuesA)});
        for (int64_t i = 0; i < full; ++i) out.push_back(blk.slice({{0, 128}, {i * mt.size, (i + 1) * mt.size}}));
        for (size_t i = static_cast<size_t>(full); i < ks.size(); ++i) {
          View s = kernels::corner(st.next(), ks[i].size, mt.size);
          kb.load(s, ctx.view(j.a, pa_t, 0, bi, ks[i], mt), {.queue = kQueueA + static_cast<int>(na_loads++ % kQueuesA)});
          out.push_back(s);
        }
        return;
      }
      if (!a_rows) {
        for (const Span& kt : ks) {
          View s = kernels::corner(st.next(), kt.size, mt.size);
          kb.load(s, ctx.view(j.a, pa_t, 0, bi, kt, mt), {.queue = kQueueA + static_cast<int>(na_loads++ % kQueuesA)});
          out.push_back(s);
        }
        return;
      }
      for (const Span& chunk : kernels::split(j.k, kRawCols)) {
        View a = ra ? ra->rows(bi, mt.begin, mt.size, chunk) : kernels::corner(araw.next(), mt.size, chunk.size);
        if (!ra) kb.load(a, ctx.view(j.a, pa_rows, 0, bi, mt, chunk), {.queue = kQueueA + static_cast<int>(na_loads++ % kQueuesA)});
        if (j.pro) a = normalise(a, mt.size);
        else if (cast_a) a = cast(a);
        const auto kts = kernels::split(chunk.size, 128);
        const View blk = stc->next();
        const int64_t w = mt.size;
        // Evacuations alternate between VectorE and ScalarE, as the attention kernel's do.
        auto evacuate = [&](const View& dst, const View& src) {
          if (n_evac++ % 2) kb.activation(dst, src, ActFunc::Copy);
          else kb.copy(dst, src);
        };
        for (size_t i0 = 0; i0 < kts.size(); i0 += static_cast<size_t>(per_evac)) {
          const size_t i1 = std::min(kts.size(), i0 + static_cast<size_t>(per_evac));
          const View t = tp.next();
          size_t full = i0;  // whole K tiles go out in one copy, a partial last one alone
          for (size_t i = i0; i < i1; ++i) {
            const int64_t c = static_cast<int64_t>(i - i0) * w;
            kb.transpose(t.slice({{0, kts[i].size}, {c, c + w}}), a.slice({{0, mt.size}, {kts[i].begin, kts[i].end()}}));
            if (kts[i].size == 128) full = i + 1;
          }
          const int64_t b0 = static_cast<int64_t>(i0) * w;
          if (full > i0) evacuate(blk.slice({{0, 128}, {b0, static_cast<int64_t>(full) * w}}), t.slice({{0, 128}, {0, static_cast<int64_t>(full - i0) * w}}));
          for (size_t i = full; i < i1; ++i) {
            const int64_t c = static_cast<int64_t>(i - i0) * w;
            evacuate(blk.slice({{0, kts[i].size}, {static_cast<int64_t>(i) * w, static_cast<int64_t>(i + 1) * w}}), t.slice({{0, kts[i].size}, {c, c + w}}));
          }
          for (size_t i = i0; i < i1; ++i)
            out.push_back(blk.slice({{0, kts[i].size}, {static_cast<int64_t>(i) * w, static_cast<int64_t>(i + 1) * w}}));
        }
      }
    };

    // K too deep to keep A^T resident: each [K tile, M tile] is fetched where it is used.
    auto stationary_one = [&](int64_t bi, Span mt, Span kt) {
      if (j.pro) throw Error(fmt::format("lowering: LayerNorm prologue of node '{}' needs A^T resident", ctx.n.name));
      View s = kernels::corner(st.next(), kt.size, mt.size);
      if (!a_rows) {
        kb.load(s, ctx.view(j.a, pa_t, 0, bi, kt, mt), {.queue = kQueueA + static_cast<int>(na_loads++ % kQueuesA)});
        return s;
      }
      View a = ra ? ra->rows(bi, mt.begin, mt.size, kt) : kernels::corner(araw.next(), mt.size, kt.size);
      if (!ra) kb.load(a, ctx.view(j.a, pa_rows, 0, bi, mt, kt), {.queue = kQueueA + static_cast<int>(na_loads++ % kQueuesA)});
      if (cast_a) a = cast(a);
      View t = kernels::corner(tp.next(), kt.size, mt.size);
      kb.transpose(t, a);
      kb.copy(s, t);
      return s;
    };

    // One group: consecutive pieces of the same batch index and columns, at most bud.group.
    auto group_end = [&](int64_t g0) {
      const Piece& head = pieces[static_cast<size_t>(g0)];
      int64_t g1 = g0 + 1;
      while (g1 < last && g1 - g0 < bud.group && (j.b_per_batch || pieces[static_cast<size_t>(g1)].bi == head.bi) &&
             pieces[static_cast<size_t>(g1)].cols.begin == head.cols.begin)
        ++g1;
      return g1;
    };
    auto load_group = [&](int64_t g0, int64_t g1, std::vector<std::vector<View>>& cached) {
      cached.assign(static_cast<size_t>(g1 - g0), {});
      for (int64_t r = g0; r < g1; ++r)
        stationary(pieces[static_cast<size_t>(r)].bi, pieces[static_cast<size_t>(r)].mt, cached[static_cast<size_t>(r - g0)]);
    };
    // One row tile per group (resident B): the next row tile's A^T is built before this one's
    // matmuls, so TensorE's transposes and the evacuations run ahead (the rings hold two).
    const bool ahead = bud.cache && bud.group == 1;
    std::vector<std::vector<View>> next_cached;
    int64_t next_g0 = -1;
    for (int64_t g0 = first; g0 < last;) {
      const Piece& head = pieces[static_cast<size_t>(g0)];
      const int64_t g1 = group_end(g0);
      const int64_t bi = head.bi;
      std::vector<View> rows_v(static_cast<size_t>(g1 - g0));  // with a LayerNorm: each row tile's whole result
      std::vector<std::vector<View>> cached(static_cast<size_t>(g1 - g0));
      // A group's A^T tiles are built row by row, one row ahead of that row's first matmuls,
      // so that TensorE starts on row 0 while the later rows' A still loads.
      bool lazy = false;
      if (bud.ws) {
        load_group(g0, g1, cached);  // every row tile's A^T before the first weight block
      } else if (bud.cache) {
        if (ahead && next_g0 == g0) cached = std::move(next_cached);
        else if (ahead) load_group(g0, g1, cached);
        else lazy = true;
        if (ahead && g1 < last) {
          next_g0 = g1;
          load_group(g1, group_end(g1), next_cached);
        }
      }
      for (const Span& cbl : kernels::split(head.cols.size, bn)) {
        const Span cb{head.cols.begin + cbl.begin, cbl.size};
        std::vector<View> block;  // B[kt, cb] for every K tile: one DMA each
        auto load_b = [&](const Span& kt, const Span& cols) {
          View m = kernels::corner(mv_rem && cols.size < bn ? mv_rem->next() : mv.next(), kt.size, cols.size);
          kb.load(m, ctx.view(j.b, pb, 0, bi, kt, cols), {.queue = kQueueB + static_cast<int>(nb_loads++ % q.b)});
          return m;
        };
        if (bud.resident_b && resident.count(cb.begin)) {
          block = resident[cb.begin];
        } else if (!bud.stream_b) {
          for (const Span& kt : ks) block.push_back(load_b(kt, cb));
          if (bud.resident_b) resident[cb.begin] = block;
        }
        std::vector<View> shared(j.epilogue.size());  // row-broadcast operands: once per block
        for (size_t e = 0; e < pre; ++e)
          if (row_operand(j.epilogue[e], pe[e])) {
            auto hit = resident_rows.find({e, cb.begin});
            if (hit != resident_rows.end()) {
              shared[e] = hit->second;
              continue;
            }
            shared[e] = kernels::corner(sopr->next(), std::min<int64_t>(128, j.m), cb.size);
            kb.load_broadcast(shared[e], ctx.view(j.epilogue[e].second, pe[e], 0, bi, {0, shared[e].partitions()}, cb), {.queue = kQueueOperand});
            if (bud.resident_b) resident_rows[{e, cb.begin}] = shared[e];
          }
        // Weight-stationary: one load of B[kt, block] per K tile for the whole group, each row
        // tile accumulating in its own bank (the same K order per element as row by row).
        std::vector<View> ws_acc;
        if (bud.ws) {
          for (int64_t r = g0; r < g1; ++r) ws_acc.push_back(kernels::corner(acc.next(), pieces[static_cast<size_t>(r)].mt.size, cb.size));
          for (int64_t ki = 0; ki < nks; ++ki) {
            const Span& kt = ks[static_cast<size_t>(ki)];
            const View m = load_b(kt, cb);
            for (int64_t r = g0; r < g1; ++r)
              kb.matmul(ws_acc[static_cast<size_t>(r - g0)], cached[static_cast<size_t>(r - g0)][static_cast<size_t>(ki)], m, ki == 0, ki + 1 == nks);
          }
        }
        for (int64_t r = g0; r < g1; ++r) {
          const Span mt = pieces[static_cast<size_t>(r)].mt;
          const int64_t rb = pieces[static_cast<size_t>(r)].bi;  // this row tile's batch index
          if (lazy && cbl.begin == 0) {  // this row's A^T (first row only) and the next row's, one ahead
            for (int64_t x = (r == g0 ? g0 : r + 1); x <= r + 1 && x < g1; ++x)
              stationary(pieces[static_cast<size_t>(x)].bi, pieces[static_cast<size_t>(x)].mt, cached[static_cast<size_t>(x - g0)]);
          }
          View& row = rows_v[static_cast<size_t>(r - g0)];
          // A result resident in SBUF is written where its readers take it: in place when it
          // is fp32, else the last step of the epilogue writes it at the operand width (fin).
          if (j.ln >= 0 && cbl.begin == 0)
            row = rdirect ? rout->rows(rb, mt.begin, mt.size, head.cols) : kernels::corner(rowbuf->next(), mt.size, head.cols.size);
          View out = j.ln >= 0 ? row.slice({{0, mt.size}, {cbl.begin, cbl.end()}})
                     : rdirect ? rout->rows(rb, mt.begin, mt.size, cb) : kernels::corner(res.next(), mt.size, cb.size);
          const View fin = rout && j.ln < 0 ? rout->rows(rb, mt.begin, mt.size, cb) : out;
          if (bud.ws) {
            kb.activation(out, ws_acc[static_cast<size_t>(r - g0)], ActFunc::Copy);
          } else if (bud.stream_b) {
            // One load of B[kt, block] per K tile, read by every bank's accumulation.
            const auto subs = kernels::split(cb.size, kTileN);
            std::vector<View> ps;
            for (const Span& s : subs) ps.push_back(kernels::corner(acc.next(), mt.size, s.size));
            for (int64_t ki = 0; ki < nks; ++ki) {
              const Span& kt = ks[static_cast<size_t>(ki)];
              const View stat = bud.cache ? cached[static_cast<size_t>(r - g0)][static_cast<size_t>(ki)] : stationary_one(rb, mt, kt);
              const View m = load_b(kt, cb);
              for (size_t si = 0; si < subs.size(); ++si)
                kb.matmul(ps[si], stat, m.slice({{0, kt.size}, {subs[si].begin, subs[si].end()}}), ki == 0, ki + 1 == nks);
            }
            for (size_t si = 0; si < subs.size(); ++si)
              kb.activation(out.slice({{0, mt.size}, {subs[si].begin, subs[si].end()}}), ps[si], ActFunc::Copy);
          }
          // Epilogue operands of this row tile and block, loaded before its matmuls.
          std::vector<View> opv(j.epilogue.size());
          for (size_t e = 0; e < pre; ++e) {
            if (j.epilogue[e].first.operand.empty()) continue;
            if (const LowerCtx::Resident* ro = ctx.resident_of(j.epilogue[e].first.operand)) {
              opv[e] = ro->rows(rb, mt.begin, mt.size, cb);  // a residual left in SBUF by its producer
            } else if (shared[e].buffer() >= 0) {
              opv[e] = kernels::corner(shared[e], mt.size, cb.size);
            } else if (pe[e].col_stride[0] == 0) {
              // Constant along the row (a conv's per-channel bias): one element per partition,
              // read back with a zero stride instead of a DMA of 4-byte runs.
              View one = kernels::corner(opr->next(), mt.size, 1);
              kb.load(one, ctx.view(j.epilogue[e].second, pe[e], 0, rb, mt, {cb.begin, 1}), {.queue = kQueueOperand});
              isa::AccessPattern ap = one.ap();
              ap.ndims = 1;
              ap.dims[0] = {0, static_cast<int32_t>(cb.size)};
              opv[e] = View(ap, {mt.size, cb.size}, one.buffer());
            } else {
              opv[e] = kernels::corner(opr->next(), mt.size, cb.size);
              kb.load(opv[e], ctx.view(j.epilogue[e].second, pe[e], 0, rb, mt, cb), {.queue = kQueueOperand});
            }
          }
          // The first epilogue op reads PSUM itself (VectorE at full rate with one PSUM operand,
          // or ScalarE's activation) instead of after a copy: the same fp32 values, one pass less.
          const bool fuse_first = !bud.stream_b && fusable_on_evacuation(j.epilogue);
          auto apply = [&](size_t e, const View& dst, const View& src, Span cols) {
            const Epilogue& ep = j.epilogue[e].first;
            View t = kernels::corner(tmp->next(), mt.size, cols.size);
            if (ep.operand.empty()) return apply_elementwise(kb, ctx.n, ep.op, dst, src, nullptr, nullptr, t, false);
            const View o = opv[e].slice({{0, mt.size}, {cols.begin, cols.end()}});
            if (ep.operand_first) apply_elementwise(kb, ctx.n, ep.op, dst, o, &src, nullptr, t, false);
            else apply_elementwise(kb, ctx.n, ep.op, dst, src, &o, nullptr, t, false);
          };
          for (const Span& s : bud.stream_b ? std::vector<Span>{} : kernels::split(cb.size, kTileN)) {
            View ps = kernels::corner(acc.next(), mt.size, s.size);
            for (int64_t ki = 0; ki < nks; ++ki)
              kb.matmul(ps, bud.cache ? cached[static_cast<size_t>(r - g0)][static_cast<size_t>(ki)] : stationary_one(rb, mt, ks[static_cast<size_t>(ki)]),
                        bud.stream_b ? load_b(ks[static_cast<size_t>(ki)], {cb.begin + s.begin, s.size})
                                     : block[static_cast<size_t>(ki)].slice({{0, ks[static_cast<size_t>(ki)].size}, {s.begin, s.end()}}),
                        ki == 0, ki + 1 == nks);
            const View dst = out.slice({{0, mt.size}, {s.begin, s.end()}});
            const View last = fin.slice({{0, mt.size}, {s.begin, s.end()}});
            if (fuse_first) apply(0, pre == 1 ? last : dst, ps, s);
            else kb.activation(pre == 0 ? last : dst, ps, ActFunc::Copy);  // ScalarE evacuates PSUM
          }
          for (size_t e = fuse_first ? 1 : 0; e < pre; ++e) apply(e, e + 1 == pre ? fin : out, out, {0, cb.size});
          if (j.ln < 0 && bud.stream_b && pre == 0 && rout && !rdirect) kb.copy(fin, out);
          if (j.ln < 0) {
            if (!rout || rout->store)
              kb.store(ctx.view(j.out, po, 0, rb, mt, cb), fin, {.queue = q.store + static_cast<int>(n_stores++ % q.stores)});
          } else if (cbl.end() == head.cols.size) {
            // The row is complete: LayerNorm as the library kernel does it (bn_stats per 512
            // columns, bn_aggr, rstd on ScalarE, normalise on ScalarE), then scale and shift.
            const int64_t ncol = head.cols.size;
            normalise_rows(kb, row, row, lnstat->next(), lnmv->next(), mt.size, ncol, j.ln_eps);
            for (size_t e = pre + 1; e < j.epilogue.size(); ++e) {
              auto it = ln_operands.find(e);
              if (it == ln_operands.end()) {
                const int64_t rows = std::min<int64_t>(128, j.m);
                View o = kernels::corner(lnop->next(), rows, ncol);
                kb.load_broadcast(o, ctx.view(j.epilogue[e].second, pe[e], 0, rb, {0, rows}, head.cols), {.queue = kQueueOperand});
                it = ln_operands.emplace(e, o).first;
              }
              opv[e] = it->second;
              apply(e, row, row, {0, ncol});
            }
            if (rout && !rdirect) kb.copy(rout->rows(rb, mt.begin, mt.size, head.cols), row);
            if (!rout || rout->store)
              kb.store(ctx.view(j.out, po, 0, rb, mt, head.cols), row, {.queue = q.store + static_cast<int>(n_stores++ % q.stores)});
          }
        }
      }
      g0 = g1;
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
  j.b_per_batch = bs.size() <= 2 || numel(Shape(bs.begin(), bs.end() - 2)) == 1;  // B in HBM vs A (fp32)
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
    if (e.op == OpKind::LayerNormalization) {
      j.ln = static_cast<int>(j.epilogue.size());
      j.ln_eps = static_cast<float>(n.f("ln_epsilon", 1e-5));
    }
    j.epilogue.emplace_back(e, v);
  }
  if (n.i("prologue_ln", 0)) {
    j.pro = true;
    j.pro_eps = static_cast<float>(n.f("prologue_ln_epsilon", 1e-5));
  }
  if (numel(full) == 0) return;
  // Weights are held in HBM at the TensorE operand width (cast once, at compile time).
  for (const std::string& w : {n.inputs[0], n.inputs[1]})
    if (g.is_const(w) && numerics::info(j.dtype).bits < 32) ctx.hbm_const_as(w, j.dtype);
  if (j.k == 0) throw UnsupportedError(fmt::format("unsupported: op MatMul (empty contraction) at node '{}'", n.name));
  const LowerCtx::Resident* ra = ctx.resident_of(j.a.tensor);
  j.a_bytes = ra ? numerics::info(ra->tile.dtype()).bits / 8 : ctx.hbm(j.a.tensor).ap().element_bytes();
  matmul_kernel(ctx, j);
}

}  // namespace trnsim::compiler
