#include "trnsim/compiler/tp_rules.h"

#include <fmt/format.h>

#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {

std::string node_label(const Node& n) { return fmt::format("{} '{}'", op_name(n.op), n.name); }

int64_t TpCtx::sp(const std::string& t) const {
  auto it = split.find(t);
  return it == split.end() ? -1 : it->second;
}

bool TpCtx::replicated_operand_ok(size_t ii, int64_t out_axis, int64_t out_rank) {
  const std::string& t = n.inputs[ii];
  const Shape& s = g.tensor(t).shape;
  const int64_t p = out_axis - (out_rank - static_cast<int64_t>(s.size()));
  if (p < 0 || s[static_cast<size_t>(p)] == 1) return true;
  if (g.is_const(t)) {
    slices.push_back({ni, ii, p});
    return true;
  }
  why = fmt::format("{}: its replicated input '{}' spans the split axis", node_label(n), t);
  return false;
}

int64_t TpCtx::refuse(const std::string& reason) {
  why = fmt::format("{}: {}", node_label(n), reason);
  return -1;
}

int64_t TpCtx::no_rule() { return refuse("no per-shard rule for this op on a split input"); }

// Element-wise ops: the inputs' split axes (aligned right) must agree and pass through.
int64_t tp_elementwise(TpCtx& c) {
  const Node& n = c.n;
  const auto R = static_cast<int64_t>(c.out_shape().size());
  int64_t axis = -1;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i].empty()) continue;
    const int64_t s = c.sp(n.inputs[i]);
    if (s < 0) continue;
    const int64_t aligned = s + R - c.rank(n.inputs[i]);
    if (axis >= 0 && aligned != axis) return c.refuse("inputs split on different axes");
    axis = aligned;
  }
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && c.sp(n.inputs[i]) < 0 && !c.replicated_operand_ok(i, axis, R)) return -1;
  return axis;
}

}  // namespace trnsim::compiler
