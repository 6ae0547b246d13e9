#include "trnsim/compiler/core_split.h"

#include <algorithm>

#include "trnsim/compiler/lower_context.h"
#include "trnsim/compiler/op_table.h"
#include "trnsim/compiler/shape_util.h"

namespace trnsim::compiler {

// Column and head splits rely on the kernel builder's exact dependency tracking: the stores of
// cores writing interleaved column ranges (or heads of a [B, S, H, D] output) of one tensor have
// overlapping byte extents but no common byte, and run concurrently.
namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t row_tiles(const Shape& s) {
  const int64_t cols = s.empty() ? 1 : std::max<int64_t>(1, s.back());
  return ceil_div(numel(s) / cols, 128);
}
}  // namespace

int64_t column_parts(int64_t pieces, int64_t cols, int64_t min_cols, int64_t cores) {
  if (pieces >= cores || pieces < 1) return 1;
  return std::max<int64_t>(1, std::min(ceil_div(cols, min_cols), ceil_div(cores, pieces)));
}

bool splittable_elementwise(const Node& n) {
  const OpClass c = op_info(n.op).cls;
  if (c != OpClass::Unary && c != OpClass::Binary) return false;
  switch (n.op) {
    case OpKind::Cast: case OpKind::CastLike: case OpKind::Floor: case OpKind::Ceil: case OpKind::Round: return false;
    default: return true;
  }
}

int64_t parallel_units(const Graph& g, const Node& n) {
  switch (n.op) {
    case OpKind::MatMul: {
      Shape as = g.tensor(n.inputs[0]).shape, bs = g.tensor(n.inputs[1]).shape;
      if (as.size() < 2 || bs.size() < 2) return 1;
      const Shape& os = g.tensor(n.outputs[0]).shape;
      const int64_t m = os[os.size() - 2], cols = os.back();
      const int64_t rows = numel(os) / std::max<int64_t>(1, m * cols) * ceil_div(m, 128);
      return rows * ceil_div(cols, kMinColsPerCore);
    }
    case OpKind::FusedAttention: return std::max<int64_t>(1, numel(n.ints("batch")));
    case OpKind::Gather: {  // an indirect DMA per 128 indices (lower_gather.cpp)
      if (n.i("axis", 0) != 0 || g.is_const(n.inputs[1])) return 1;
      return ceil_div(numel(g.tensor(n.inputs[1]).shape), 128);
    }
    case OpKind::Softmax:
    case OpKind::LayerNormalization: return row_tiles(g.tensor(n.inputs[0]).shape);
    default: {
      if (!splittable_elementwise(n) || n.outputs.empty()) return 1;
      const Shape& os = g.tensor(n.outputs[0]).shape;
      if (numel(os) < kMinElementwiseElems) return 1;
      // Upper bound of the lowering's pieces (it may merge axes into longer rows).
      const int64_t cols = os.empty() ? 1 : std::max<int64_t>(1, os.back());
      return row_tiles(os) * ceil_div(cols, kMinElementwiseCols);
    }
  }
}

void split_across_cores(Graph& g, int cores) {
  for (auto& n : g.nodes) {
    const int64_t k = std::min<int64_t>(cores, std::max<int64_t>(1, parallel_units(g, n)));
    if (k > 1) n.attrs["cores"] = k;  // absent: one core
  }
}

void for_each_core_share(LowerCtx& ctx, int64_t units, const std::function<void(int64_t, int64_t)>& f) {
  const int64_t nc = std::max<int64_t>(1, std::min<int64_t>(ctx.cores, units));
  for (int64_t c = 0; c < nc; ++c) {
    ctx.kb.set_core(static_cast<int>(c));
    f(c * units / nc, (c + 1) * units / nc);
  }
  ctx.kb.set_core(0);
}

}  // namespace trnsim::compiler
