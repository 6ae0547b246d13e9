// The presets shipped in configs/, compiled into the library (cmake/embed_presets.cmake).
#pragma once
#include <string_view>
#include <vector>

namespace trnsim::hw {

struct EmbeddedFile {
  std::string_view path;  // relative to configs/, e.g. "chips/trn2.yaml"
  std::string_view text;
};

const std::vector<EmbeddedFile>& embedded_config_files();

}  // namespace trnsim::hw
