#include "trnsim/hw/specs_report.h"

#include <algorithm>
#include <tuple>

#include "trnsim/hw/preset_registry.h"
#include "trnsim/hw/spec_json.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::hw {

SpecsSelection select_specs(const std::vector<std::string>& chips,
                            const std::vector<std::string>& systems) {
  bool all = chips.empty() && systems.empty();
  SpecsSelection out;
  for (auto& c : all ? preset_names(PresetKind::Chip) : chips) out.chips.push_back(load_chip(c));
  for (auto& s : all ? preset_names(PresetKind::System) : systems) out.systems.push_back(load_system(s));
  if (all) {
    // Presets by generation (core version), then size, rather than by file name.
    std::stable_sort(out.chips.begin(), out.chips.end(), [](const ChipSpec& a, const ChipSpec& b) {
      return std::tie(a.core.version, a.name) < std::tie(b.core.version, b.name);
    });
    std::stable_sort(out.systems.begin(), out.systems.end(), [](const SystemSpec& a, const SystemSpec& b) {
      return std::tie(a.chip.core.version, a.chips, a.name) < std::tie(b.chip.core.version, b.chips, b.name);
    });
  }
  return out;
}

nlohmann::json specs_json(const SpecsSelection& selection) {
  nlohmann::json doc = {{"chips", nlohmann::json::array()}, {"systems", nlohmann::json::array()}};
  for (auto& c : selection.chips) doc["chips"].push_back(to_json(c));
  for (auto& s : selection.systems) doc["systems"].push_back(to_json(s));
  return doc;
}

}  // namespace trnsim::hw
