#include "trnsim/hw/preset_registry.h"

#include <fmt/core.h>

#include <algorithm>

#include "trnsim/common/error.h"

namespace trnsim::hw {
namespace {

std::string_view folder(PresetKind kind) {
  return kind == PresetKind::Chip ? "chips/" : kind == PresetKind::System ? "systems/" : "gpus/";
}

// "chips/trn2.yaml" -> "trn2" if the file is of `kind`, else empty.
std::string_view name_of(const EmbeddedFile& f, PresetKind kind) {
  std::string_view p = f.path, dir = folder(kind), ext = ".yaml";
  if (!p.starts_with(dir) || !p.ends_with(ext)) return {};
  p.remove_prefix(dir.size());
  p.remove_suffix(ext.size());
  return p.find('/') == std::string_view::npos ? p : std::string_view{};
}

}  // namespace

std::vector<std::string> preset_names(PresetKind kind) {
  std::vector<std::string> out;
  for (auto& f : embedded_config_files())
    if (auto n = name_of(f, kind); !n.empty()) out.emplace_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

const EmbeddedFile* find_preset(PresetKind kind, std::string_view name) {
  for (auto& f : embedded_config_files())
    if (!name.empty() && name_of(f, kind) == name) return &f;
  return nullptr;
}

std::string preset_list(PresetKind kind) {
  std::string out;
  for (auto& n : preset_names(kind)) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string_view preset_yaml(std::string_view name) {
  if (auto* f = find_preset(PresetKind::Chip, name)) return f->text;
  if (auto* f = find_preset(PresetKind::System, name)) return f->text;
  if (auto* f = find_preset(PresetKind::Gpu, name)) return f->text;
  throw ConfigError(fmt::format("no preset named '{}' (chips: {}; systems: {}; GPUs: {})", name,
                                preset_list(PresetKind::Chip), preset_list(PresetKind::System),
                                preset_list(PresetKind::Gpu)));
}

std::string preset_source(const EmbeddedFile& f) { return fmt::format("preset:{}", f.path); }

}  // namespace trnsim::hw
