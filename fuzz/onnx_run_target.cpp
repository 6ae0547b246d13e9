// ONNX importer + compiler + runtime (round 5): bytes -> import_onnx_bytes -> compile for trn2
// (bf16) -> LoadedModel (the linked program: the cross-kernel dependency tracker of
// runtime/access_tracker.h) -> a timing-mode run, what `trnsim run --timing-only` does. The
// onnx target stops after compiling, so the linker and the timing simulator were never fuzzed.
#include "fuzz_target.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const trnsim::hw::ChipSpec chip = trnsim::hw::load_chip("trn2");
  return trnsim::fuzz::run_target(data, size, [](const std::string& bytes) {
    trnsim::compiler::CompileOptions o;
    o.policy = trnsim::compiler::DTypePolicy::BF16;
    const auto cm = trnsim::compiler::compile(trnsim::compiler::import_onnx_bytes(bytes, "fuzz.onnx"), chip, o);
    trnsim::runtime::LoadedModel(cm, chip).run({}, trnsim::core::Mode::Timing);
  });
}
