// Loading chip and system specs from presets (preset_registry.h) or users' YAML files. Every
// field is checked; a malformed file is a ConfigError of one line naming file, line, field and
// what was expected (format in yaml_fields.h). The YAML keys are the field names of chip_spec.h.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "trnsim/hw/chip_spec.h"

namespace trnsim::hw {

// A name_or_path is a file path when it contains '/' or ends in ".yaml" / ".yml", else the name
// of a preset. (So "my.yaml" is a file in the current directory and "trn2" is the preset.)
bool is_path(std::string_view name_or_path);

ChipSpec load_chip(std::string_view name_or_path);
SystemSpec load_system(std::string_view name_or_path);

// From YAML text. `source` names the text in errors and becomes source_file. A system's `chip:`
// may be a path relative to `base_dir`; with an empty base_dir (presets) only preset names.
ChipSpec parse_chip(const std::string& yaml, const std::string& source);
SystemSpec parse_system(const std::string& yaml, const std::string& source,
                        const std::filesystem::path& base_dir);

// The whole file, or ConfigError "<path>: cannot read: <reason>".
std::string read_config_file(const std::filesystem::path& path);

}  // namespace trnsim::hw
