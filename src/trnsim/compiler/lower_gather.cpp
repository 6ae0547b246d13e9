// Gather on axis 0 with indices computed at run time: an embedding lookup, run the way the
// Neuron compiler runs one, on the DMA engines. Per 128 indices: they are loaded into SBUF
// (one per partition), negative ones wrap (+rows, VectorE), and one indirect DMA copies the
// selected table rows straight into the output rows in HBM. No arithmetic touches the values,
// so the result is the table's bits under every dtype policy. The index tiles are divided
// among the node's cores (core_split.h).
#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/checked.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/core_split.h"
#include "trnsim/compiler/lower_matmul.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

using isa::AluOp;
using kernels::Span;
using kernels::TileRing;
using kernels::View;

void lower_gather(LowerCtx& ctx) {
  const Node& n = ctx.n;
  const Graph& g = ctx.g;
  const Shape& ds = g.tensor(n.inputs[0]).shape;
  if (normalize_axis(n.i("axis", 0), static_cast<int64_t>(ds.size()), n.name) != 0)
    throw UnsupportedError(fmt::format("unsupported: op Gather (attribute axis!=0 with indices computed at run time) at node '{}'", n.name));
  const int64_t V = ds[0], D = numel(ds) / std::max<int64_t>(V, 1), T = numel(g.tensor(n.inputs[1]).shape);
  if (T == 0 || D == 0) return;
  if (V < 1) throw ShapeError(fmt::format("Gather '{}': indices into an empty table", n.name));
  auto& kb = ctx.kb;
  // Four instructions per 128 indices: refused up front, before millions are built.
  kb.expect_instructions(checked_mul(T / 128 + (T % 128 != 0), 4, "Gather instruction count"));
  const kernels::Tensor& table = ctx.hbm_shaped(n.inputs[0], {V, D});
  // Declared [T, 1] and [T, D], so a tile of indices or output rows is a slice of the first axis.
  const kernels::Tensor& idx = ctx.hbm_shaped(n.inputs[1], {T, 1});
  const kernels::Tensor& out = ctx.hbm_shaped(n.outputs[0], {T, D});
  const auto tiles = kernels::split(T, 128);
  for_each_core_share(ctx, static_cast<int64_t>(tiles.size()), [&](int64_t first, int64_t last) {
    if (first >= last) return;
    TileRing ir(kb, isa::Space::SBUF, {128, 1}, DType::F32, 2, n.name + ".idx");
    TileRing tr(kb, isa::Space::SBUF, {128, 1}, DType::F32, 2, n.name + ".wrap");
    for (int64_t i = first; i < last; ++i) {
      const Span tt = tiles[static_cast<size_t>(i)];
      View it = kernels::corner(ir.next(), tt.size, 1);
      kb.load(it, idx.slice({tt.range()}));
      View t = kernels::corner(tr.next(), tt.size, 1);
      kb.tensor_scalar(t, it, AluOp::IsLt, 0.0f, AluOp::Mul, static_cast<float>(V));  // V where negative
      kb.tensor_tensor(it, it, t, AluOp::Add);
      kb.dma_gather(out.slice({tt.range()}), table, it);
    }
  });
}

}  // namespace trnsim::compiler
