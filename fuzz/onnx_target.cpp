// ONNX importer + compiler: bytes -> import_onnx_bytes -> compile for trn2 (bf16, batch 1).
#include "fuzz_target.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const trnsim::hw::ChipSpec chip = trnsim::hw::load_chip("trn2");
  return trnsim::fuzz::run_target(data, size, [](const std::string& bytes) {
    trnsim::compiler::CompileOptions o;
    o.policy = trnsim::compiler::DTypePolicy::BF16;
    trnsim::compiler::compile(trnsim::compiler::import_onnx_bytes(bytes, "fuzz.onnx"), chip, o);
  });
}
