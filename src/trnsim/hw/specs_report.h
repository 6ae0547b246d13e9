// What `trnsim specs` and trnsim.specs() show: a set of chips and systems picked by name or file,
// and its JSON document {"chips": [...], "systems": [...]}. One implementation for both, so the
// command line and Python cannot drift apart.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trnsim/hw/chip_spec.h"

namespace trnsim::hw {

struct SpecsSelection {
  std::vector<ChipSpec> chips;
  std::vector<SystemSpec> systems;
};

// With no names at all: every preset (chips and systems). Otherwise exactly the chips and systems
// named, in the order given; each is a preset name or a file path (spec_loader.h: is_path).
SpecsSelection select_specs(const std::vector<std::string>& chips,
                            const std::vector<std::string>& systems);

nlohmann::json specs_json(const SpecsSelection& selection);

}  // namespace trnsim::hw
