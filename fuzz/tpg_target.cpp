// The saved-program (.tpg) loader, as an attacker sees it: the payload hash is FNV-1a, a
// checksum anyone can recompute, so the target recomputes it before loading (otherwise
// nearly every mutation would stop at the hash). Loading validates every program against
// the chip; a program that loads is then run in functional mode on zero inputs, where a
// pattern that got past validation would write out of bounds.
#include <cstring>

#include "fuzz_target.h"
#include "trnsim/common/checked.h"
#include "trnsim/compiler/compiled_model_io.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"

namespace {
uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) { h ^= c; h *= 1099511628211ull; }
  return h;
}

// Header: magic(8) version(4) chip name (u64 length + bytes) chip hash(8) payload size(8)
// payload hash(8). Rewrites the payload hash when the header is long enough to hold one.
void fix_hash(std::string& b) {
  if (b.size() < 20) return;
  uint64_t n;
  std::memcpy(&n, b.data() + 12, 8);
  if (n > 64 || b.size() < 20 + n + 24) return;
  const size_t at = 20 + n + 16;
  const uint64_t h = fnv1a(std::string_view(b).substr(at + 8));
  std::memcpy(b.data() + at, &h, 8);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const trnsim::hw::ChipSpec chip = trnsim::hw::load_chip("trn2");
  return trnsim::fuzz::run_target(data, size, [](const std::string& in) {
    std::string bytes = in;
    fix_hash(bytes);
    const auto model = trnsim::compiler::deserialize_compiled(bytes, "fuzz.tpg", chip);
    // Run small models functionally on zero inputs (large ones would only make fuzzing slow).
    std::map<std::string, std::vector<float>> inputs;
    int64_t total = 0;
    for (const auto& name : model.inputs) {
      const int64_t n = trnsim::checked_numel(model.shapes.at(name), name);
      total += n;
      if (total > (int64_t{1} << 20)) return;
      inputs[name].assign(static_cast<size_t>(n), 0.0f);
    }
    trnsim::runtime::LoadedModel(model, chip).run(inputs, trnsim::core::Mode::Functional);
  });
}
