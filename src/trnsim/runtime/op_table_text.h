// The per-op breakdown as text, longest first, for one chip's report (report_table) and a
// tensor-parallel rank's (tp_report_table): any op record with node, op, fused and time_s.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::runtime {

// `title` gets the kernel count ("per-op breakdown (12 kernels)"); shares are of `total_s`;
// past `top_ops` rows the rest are summed in one "(N more)" row.
template <class Op>
std::string op_table_text(const std::vector<Op>& records, double total_s, size_t top_ops, std::string_view title) {
  std::vector<const Op*> ops;
  for (const auto& o : records) ops.push_back(&o);
  std::stable_sort(ops.begin(), ops.end(), [](const Op* a, const Op* b) { return a->time_s > b->time_s; });
  // Node names are never cut (PyTorch's differ in the middle: "/layer.0/.../MatMul"): the
  // column is as wide as the longest one shown.
  size_t w = 40;
  for (size_t i = 0; i < ops.size() && i < top_ops; ++i) w = std::max(w, ops[i]->node.size());
  std::string s = fmt::format("{} ({} kernels)\n  {:<{}} {:<18} {:>12} {:>7}\n", title, ops.size(), "node", w, "op", "time (us)", "share");
  const auto share = [&](double t) { return total_s > 0 ? 100 * t / total_s : 0.0; };
  double rest = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i >= top_ops) { rest += ops[i]->time_s; continue; }
    // "MatMul+2": a matmul with two element-wise ops fused into its epilogue.
    std::string op = ops[i]->op + (ops[i]->fused.empty() ? "" : fmt::format("+{}", ops[i]->fused.size()));
    s += fmt::format("  {:<{}} {:<18} {:>12.3f} {:>6.1f}%\n", ops[i]->node, w, op, ops[i]->time_s * 1e6, share(ops[i]->time_s));
  }
  if (rest > 0) s += fmt::format("  {:<{}} {:<18} {:>12.3f} {:>6.1f}%\n", fmt::format("({} more)", ops.size() - top_ops), w, "", rest * 1e6, share(rest));
  return s;
}

}  // namespace trnsim::runtime
