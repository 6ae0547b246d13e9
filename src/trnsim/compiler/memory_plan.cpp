#include "trnsim/compiler/memory_plan.h"

#include <fmt/format.h>

#include <set>

#include "trnsim/common/error.h"
#include "trnsim/common/checked.h"
#include "trnsim/compiler/initialiser.h"

namespace trnsim::compiler {

HbmPlan plan_hbm(const Graph& g, const hw::ChipSpec& chip) {
  HbmPlan p;
  auto bytes = [&](const std::string& n) { return checked_mul(numel(g.tensor(n).shape), 4, "tensor '" + n + "' in HBM"); };
  std::set<std::string> io(g.inputs.begin(), g.inputs.end());
  io.insert(g.outputs.begin(), g.outputs.end());
  p.weight_bytes = constant_bytes(g);  // at their storage width (quantised weights narrower)
  // Sums in checked arithmetic too: two inputs of 2^62 bytes each overflowed (UBSan; fuzz).
  const std::string total = "the model's HBM bytes";
  for (const auto& n : io) p.io_bytes = checked_add(p.io_bytes, bytes(n), total);
  // Last reader of each intermediate.
  std::map<std::string, size_t> last;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& in : g.nodes[i].inputs) last[in] = i;
    for (const auto& e : g.nodes[i].epilogue) last[e.operand] = i;
  }
  int64_t live = 0;
  std::map<size_t, int64_t> frees;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& o : g.nodes[i].outputs) {
      if (o.empty() || io.count(o)) continue;
      live = checked_add(live, bytes(o), total);
      int64_t& f = frees[last.count(o) ? last[o] : i];
      f = checked_add(f, bytes(o), total);
    }
    p.peak_activation_bytes = std::max(p.peak_activation_bytes, live);
    live -= frees[i];
  }
  p.capacity_bytes = static_cast<int64_t>(chip.hbm.capacity.value());
  const int64_t need = checked_add(checked_add(p.weight_bytes, p.io_bytes, total), p.peak_activation_bytes, total);
  if (p.capacity_bytes > 0 && need > p.capacity_bytes)
    throw ShapeError(fmt::format("model needs {} bytes of HBM (weights {}, activations {}), {} has {}", need, p.weight_bytes,
                                 p.peak_activation_bytes, chip.name, p.capacity_bytes));
  return p;
}

}  // namespace trnsim::compiler
