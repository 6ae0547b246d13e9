#include "trnsim/hw/spec_loader.h"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "trnsim/common/error.h"
#include "trnsim/common/file_read.h"
#include "trnsim/hw/preset_registry.h"

namespace trnsim::hw {
namespace {

template <class Spec, class Parse>
Spec load(std::string_view name_or_path, PresetKind kind, Parse parse) {
  std::string_view what = kind == PresetKind::Chip ? "chip" : "system";
  if (is_path(name_or_path)) {
    std::filesystem::path p(name_or_path);
    // A file's relative references resolve next to it ("." for a bare file name); an empty
    // base_dir is reserved for presets.
    auto dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
    return parse(read_config_file(p), p.string(), dir);
  }
  if (auto* f = find_preset(kind, name_or_path))
    return parse(std::string(f->text), preset_source(*f), std::filesystem::path());
  throw ConfigError(fmt::format("no {} preset named '{}' (presets: {}); a file path must contain '/' "
                                "or end in .yaml",
                                what, name_or_path, preset_list(kind)));
}

}  // namespace

bool is_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.ends_with(".yaml") || s.ends_with(".yml");
}

std::string read_config_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(fmt::format("{}: cannot read: is a directory", path.string()));
  // A spec is a few KiB; 16 MiB bounds /dev/zero or a wrong file named by mistake.
  return read_file_bounded<ConfigError>(path.string(), int64_t{16} << 20, "a chip or system YAML is a few KiB");
}

ChipSpec load_chip(std::string_view name_or_path) {
  return load<ChipSpec>(name_or_path, PresetKind::Chip,
                        [](const std::string& y, const std::string& src, const std::filesystem::path&) {
                          return parse_chip(y, src);
                        });
}

SystemSpec load_system(std::string_view name_or_path) {
  return load<SystemSpec>(name_or_path, PresetKind::System, parse_system);
}

}  // namespace trnsim::hw
