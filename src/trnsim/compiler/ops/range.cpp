// Range(start, limit, delta): max(0, ceil((limit - start) / delta)) values, folded on the host
// (its inputs must be constant).
#include <algorithm>
#include <cmath>

#include "trnsim/common/limits.h"
#include "trnsim/compiler/op_unit.h"

namespace trnsim::compiler {
namespace {

void infer(Graph& g, const Node& n) {
  // Range-27's stash_type: the precision of float16/bfloat16 ranges; values are computed in
  // double here and rounded once, as float (1) or double (11) stashing does for these sizes.
  if (int st = static_cast<int>(n.i("stash_type", 1)); st != 1 && st != 11)
    throw UnsupportedError(fmt::format("unsupported: op Range (attribute stash_type = {}; trnsim implements 1 and 11) at node '{}'", st, n.name));
  double s = const_scalar(g, n, 0, 0), l = const_scalar(g, n, 1, 0), d = const_scalar(g, n, 2, 1);
  // onnxruntime refuses these; a zero or NaN delta made a count of 0 or of undefined cast.
  if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d) || d == 0)
    throw ShapeError(fmt::format("node '{}': Range({}, {}, {}) needs finite values and a non-zero delta", n.name, s, l, d));
  const double count = std::max(0.0, std::ceil((l - s) / d));
  check_memory(8.0 * count, fmt::format("node '{}': Range of {} values", n.name, count));
  const auto cnt = static_cast<int64_t>(count);
  set_output(g, n, 0, {cnt}, input(g, n, 0).type);
}

void eval(Graph& g, const Node& n, std::vector<double>& r) {
  double s = const_scalar(g, n, 0, 0), d = const_scalar(g, n, 2, 1);
  for (size_t i = 0; i < r.size(); ++i) r[i] = s + d * static_cast<double>(i);
}

}  // namespace

void register_range(OpRegistry& r) {
  r.push_back({.kind = OpKind::Range, .name = "Range", .cls = OpClass::Shape, .min_inputs = 3, .max_inputs = 3, .attributes = {"stash_type"},
               .rules = {.infer = infer, .eval = eval}});
}

}  // namespace trnsim::compiler
