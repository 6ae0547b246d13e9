#include "trnsim/compiler/core_split.h"

#include <algorithm>

#include "trnsim/compiler/lower_context.h"
#include "trnsim/compiler/op_unit.h"
#include "trnsim/compiler/shape_util.h"
#include "trnsim/common/checked.h"

namespace trnsim::compiler {

// Column and head splits rely on the kernel builder's exact dependency tracking: the stores of
// cores writing interleaved column ranges (or heads of a [B, S, H, D] output) of one tensor have
// overlapping byte extents but no common byte, and run concurrently.
int64_t row_tiles(const Shape& s) {
  const int64_t cols = s.empty() ? 1 : std::max<int64_t>(1, s.back());
  return ceil_div(numel(s) / cols, 128);
}

int64_t column_parts(int64_t pieces, int64_t cols, int64_t min_cols, int64_t cores) {
  if (pieces >= cores || pieces < 1) return 1;
  return std::max<int64_t>(1, std::min(ceil_div(cols, min_cols), ceil_div(cores, pieces)));
}

// The element-wise units that may be split say so with the shared elementwise_units rule;
// the casts and roundings (extra tile rings of their own) do not.
bool splittable_elementwise(const Node& n) { return op_rules(n.op).parallel_units == &elementwise_units; }

int64_t parallel_units(const Graph& g, const Node& n) {
  const auto rule = op_rules(n.op).parallel_units;
  return rule ? rule(g, n) : 1;
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
