// The presets compiled into trnsim (presets.h): chips from configs/chips/, systems from
// configs/systems/, GPU peers and their systems from configs/gpus/, each named by its file name without ".yaml" ("trn2", "trn2.48xlarge").
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/hw/presets.h"

namespace trnsim::hw {

enum class PresetKind { Chip, System, Gpu };  // Gpu: configs/gpus (GPUs and GPU systems)

std::vector<std::string> preset_names(PresetKind kind);  // sorted
// The preset's file, or nullptr if there is none of that kind and name.
const EmbeddedFile* find_preset(PresetKind kind, std::string_view name);
// The YAML text of a chip or system preset, comments included, so a user can copy it.
// Throws ConfigError listing every preset when `name` is none of them.
std::string_view preset_yaml(std::string_view name);
// "preset:chips/trn2.yaml": how a preset is named in errors and in ChipSpec::source_file.
std::string preset_source(const EmbeddedFile& f);
// "inf2, trn1, trn2, trn3": for messages.
std::string preset_list(PresetKind kind);

}  // namespace trnsim::hw
