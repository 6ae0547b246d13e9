#include "trnsim/workloads/llm_fused_pointwise.h"

#include <algorithm>

#include "trnsim/kernels/kernel_builder.h"
#include "trnsim/kernels/row_kernel.h"
#include "trnsim/kernels/tiling.h"

namespace trnsim::workloads {
namespace {

using isa::Space;
using kernels::ActFunc;
using kernels::AluOp;
using kernels::KernelBuilder;
using kernels::Tensor;
using kernels::TileRing;
using kernels::View;
constexpr auto kDt = numerics::DType::BF16;
constexpr float kEps = 1e-6f;

// Pieces per row: a row of `w` elements is spread over c partitions (w / c each), so that a
// few decode tokens still use all 128 lanes and DMA engines; c divides w, c <= limit.
int64_t pieces(int64_t w, int64_t limit) {
  int64_t c = std::max<int64_t>(1, std::min(limit, w));
  while (w % c) --c;
  return c;
}

struct Width {
  int64_t w, c;  // row width, pieces per row
  int64_t cols() const { return w / c; }
};

void build(KernelBuilder& kb, int cores, int64_t m, int64_t h, int64_t i, int64_t qk, bool norms_only) {
  // Rows per tile and pieces per row: at least enough pieces that one row's live tiles fit
  // half of SBUF (7 bf16 [., h / c] tiles, 4 of the widest other width), at most 128 / rows.
  const int64_t budget = kernels::sbuf_budget(kb);
  const int64_t c_fit = (14 * h + 8 * (norms_only ? 0 : std::max(i, qk)) + budget - 1) / budget;
  const int64_t rows = std::max<int64_t>(1, std::min<int64_t>(m, 128 / std::max<int64_t>(1, c_fit)));
  const Width H{h, pieces(h, std::max(c_fit, 128 / rows))};
  const Width Q{qk, pieces(qk, 128 / rows)}, I{i, pieces(i, 128 / rows)};
  auto in = [&](const char* n, Width w) { return kb.hbm_input(n, {m * w.c, w.cols()}, kDt); };
  auto out = [&](const char* n, Width w) { return kb.hbm_output(n, {m * w.c, w.cols()}, kDt); };
  const Tensor x = in("x", H), attn = in("attn_out", H), ffn = in("ffn_out", H);
  const Tensor gamma = kb.hbm_input("gamma", {H.c, H.cols()}, kDt);
  const Tensor blocks = kb.hbm_input("group_sum", {128, 128}, kDt);  // block-diagonal ones
  const Tensor n1 = out("norm1", H), h1 = out("h1", H), n2 = out("norm2", H), h2 = out("h2", H);
  Tensor q, cs, qr, sn, qo, gate, up, act;
  if (!norms_only) {
    q = in("qk", Q), cs = in("cos", Q), qr = in("qk_rot", Q), sn = in("sin", Q), qo = out("qk_rope", Q);
    gate = in("gate", I), up = in("up", I), act = out("swiglu", I);
  }
  const auto tiles = kernels::split(m, rows);
  const int64_t parts = std::min<int64_t>(cores, static_cast<int64_t>(tiles.size()));
  for (int64_t core = 0; core < parts; ++core) {
    kb.set_core(static_cast<int>(core));
    const int64_t P = rows * H.c;  // partitions of a full hidden tile
    TileRing gr(kb, Space::SBUF, {P, H.cols()}, kDt, 1, "fused.gamma");
    const View g = gr.next();
    for (int64_t r = 0; r < rows; ++r) kb.load(g.slice({{r * H.c, (r + 1) * H.c}, {0, H.cols()}}), gamma);
    TileRing br(kb, Space::SBUF, {128, 128}, kDt, 1, "fused.group_sum");
    const View bsum = br.next();
    if (H.c > 1) kb.load(bsum, blocks);
    TileRing a(kb, Space::SBUF, {P, H.cols()}, kDt, 2, "fused.a"), b(kb, Space::SBUF, {P, H.cols()}, kDt, 2, "fused.b");
    TileRing work(kb, Space::SBUF, {P, H.cols()}, kDt, 2, "fused.work");
    TileRing st(kb, Space::SBUF, {P, 2}, numerics::DType::F32, 2, "fused.stats");
    TileRing ps(kb, Space::PSUM, {P, 1}, numerics::DType::F32, 2, "fused.group");
    const int64_t wide = std::max(Q.cols(), I.cols());
    TileRing e1(kb, Space::SBUF, {128, wide}, kDt, 2, "fused.e1"), e2(kb, Space::SBUF, {128, wide}, kDt, 2, "fused.e2");

    auto load = [&](TileRing& ring, const Tensor& t, Width w, kernels::Span rs) {
      View v = kernels::corner(ring.next(), rs.size * w.c, w.cols());
      kb.load(v, t.slice({{rs.begin * w.c, rs.end() * w.c}, {0, w.cols()}}));
      return v;
    };
    auto store = [&](const Tensor& t, Width w, kernels::Span rs, const View& v) {
      kb.store(t.slice({{rs.begin * w.c, rs.end() * w.c}, {0, w.cols()}}), v);
    };
    // RMSNorm of a tile (ScalarE square-and-sum per partition; the pieces of a row summed and
    // broadcast back by one TensorE matmul with block-diagonal ones; rsqrt; scale; gamma).
    auto rmsnorm = [&](const View& xt) {
      const int64_t p = xt.partitions();
      const auto& s = st.next();
      View sum = s.slice({{0, p}, {0, 1}}), rstd = s.slice({{0, p}, {1, 2}});
      View sq = kernels::corner(work.next(), p, H.cols());
      kb.activation(sq, xt, ActFunc::Square, 1.0f, 0.0f, &sum);
      View total = sum;
      if (H.c > 1) {
        total = kernels::corner(ps.next(), p, 1);
        kb.matmul(total, bsum.slice({{0, p}, {0, p}}), sum);
      }
      kb.activation(rstd, total, ActFunc::Rsqrt, 1.0f / static_cast<float>(h), kEps);
      View n = kernels::corner(work.next(), p, H.cols());
      kb.activation(n, xt, ActFunc::Copy, rstd);
      kb.tensor_tensor(n, n, g.slice({{0, p}, {0, H.cols()}}), AluOp::Mul);
      return n;
    };

    for (size_t t = core * tiles.size() / parts; t < (core + 1) * tiles.size() / parts; ++t) {
      const kernels::Span r = tiles[t];
      View xt = load(a, x, H, r);  // norm1
      store(n1, H, r, rmsnorm(xt));
      if (!norms_only) {  // rope: q * cos + rot(q) * sin
        View qt = load(e1, q, Q, r), ct = load(e2, cs, Q, r);
        kb.tensor_tensor(qt, qt, ct, AluOp::Mul);
        View rt = load(e1, qr, Q, r), s = load(e2, sn, Q, r);
        kb.tensor_tensor(rt, rt, s, AluOp::Mul);
        kb.tensor_tensor(qt, qt, rt, AluOp::Add);
        store(qo, Q, r, qt);
      }
      View at = load(b, attn, H, r);  // norm2: the residual, then RMSNorm of it in SBUF
      kb.tensor_tensor(xt, xt, at, AluOp::Add);
      store(h1, H, r, xt);
      store(n2, H, r, rmsnorm(xt));
      if (!norms_only) {  // swiglu: SiLU on ScalarE, the product on VectorE
        View gt = load(e1, gate, I, r), ut = load(e2, up, I, r);
        kb.activation(gt, gt, ActFunc::Silu);
        kb.tensor_tensor(gt, gt, ut, AluOp::Mul);
        store(act, I, r, gt);
      }
      View ft = load(b, ffn, H, r);  // residual 2 (h1 still in SBUF)
      kb.tensor_tensor(ft, ft, xt, AluOp::Add);
      store(h2, H, r, ft);
    }
  }
}

}  // namespace

isa::Program fused_pointwise_program(const hw::ChipSpec& chip, int cores, int64_t m, int64_t h, int64_t i, int64_t qk,
                                     bool norms_only) {
  kernels::BuilderOptions bo;
  bo.cores = cores;
  KernelBuilder kb(chip, bo);
  kb.set_name(norms_only ? "llm_norms_fused" : "llm_pointwise_fused");
  build(kb, cores, m, h, i, qk, norms_only);
  return kb.build();
}

}  // namespace trnsim::workloads
