// Saving and reloading a CompiledModel (`trnsim compile -o model.tpg`, `trnsim run model.tpg`,
// CompiledModel.save / trnsim.load_compiled). Layout, all little-endian:
//
//   "TRNSIMPG"  u32 format version  str chip name  u64 chip-spec hash
//   u64 payload bytes  u64 payload FNV-1a hash  payload
//
// The payload holds the dtype policy, compile time, inputs/outputs and their shapes, the HBM
// plan, the pass records, the final IR graph (with its constants) and the segments with their
// Programs (isa/program_io.h). A reloaded model runs bit-identically to the original. Loading
// checks the magic, the version, the payload hash, every read's bounds and the chip: a
// mismatch is an Error naming the file and what is wrong.
#pragma once
#include <cstdint>
#include <string>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::compiler {

inline constexpr char kCompiledMagic[8] = {'T', 'R', 'N', 'S', 'I', 'M', 'P', 'G'};
inline constexpr uint32_t kCompiledFormatVersion = 5;  // 2: indirect DMA (Dma::indirect, Dma::index); 3: narrow constants packed; 4: constants in their own type (const_data.h); 5: MX instructions (MatmulMx, QuantizeMx)
// Version 5 only added instruction kinds (at the end of isa::Op): a version-4 file reads as is.
inline constexpr uint32_t kOldestReadableFormatVersion = 4;

// FNV-1a of the chip's spec as JSON (its source path left out): two specs with equal fields
// hash equal wherever they were loaded from.
uint64_t chip_spec_hash(const hw::ChipSpec& chip);

std::string serialize_compiled(const CompiledModel& model, const hw::ChipSpec& chip);
// Writes serialize_compiled() to `path`; Error "cannot write '<path>'" on failure.
void save_compiled(const CompiledModel& model, const hw::ChipSpec& chip, const std::string& path);

struct CompiledHeader {
  uint32_t version = 0;
  std::string chip;          // ChipSpec::name the model was compiled for
  uint64_t chip_hash = 0;
};

// True when the file starts with the "TRNSIMPG" magic (false for unreadable files).
bool is_compiled_file(const std::string& path);
// The header alone (checks magic and version): which chip to load before load_compiled.
CompiledHeader read_compiled_header(const std::string& path);
// The whole model, checked against `chip` (name and spec hash must match the file's) and
// every Program validated against the chip. `source` names the bytes in errors.
CompiledModel deserialize_compiled(const std::string& bytes, const std::string& source, const hw::ChipSpec& chip);
CompiledModel load_compiled(const std::string& path, const hw::ChipSpec& chip);

}  // namespace trnsim::compiler
