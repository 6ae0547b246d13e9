// Chip and system YAML loaders: the same text as a chip spec and as a system spec (whose
// `chip:` may name presets only, as for a preset: no file is opened).
#include "fuzz_target.h"
#include "trnsim/hw/spec_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  trnsim::fuzz::run_target(data, size, [](const std::string& text) { trnsim::hw::parse_chip(text, "fuzz.yaml"); });
  return trnsim::fuzz::run_target(data, size, [](const std::string& text) {
    trnsim::hw::parse_system(text, "fuzz.yaml", std::filesystem::path());
  });
}
