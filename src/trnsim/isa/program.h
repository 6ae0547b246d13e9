// A Program: what a kernel builder (or the compiler) hands to the simulator. Per core, one
// in-order instruction stream per compute engine and any number of DMA queues; the HBM
// tensors the program reads and writes; the number of semaphores (shared by all cores).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trnsim/isa/instruction.h"

namespace trnsim::isa {

struct HbmTensor {
  std::string name;
  std::vector<int64_t> shape;   // row-major
  DType dtype = DType::F32;
  enum class Kind : uint8_t { Input, Output, Internal } kind = Kind::Input;
  int64_t elements() const;
  int64_t bytes() const;
};

struct CoreProgram {
  std::array<std::vector<Instruction>, kComputeEngines> engines;  // indexed by Engine
  std::vector<std::vector<Instruction>> dma_queues;
  std::vector<Instruction>& stream(Engine e) { return engines[static_cast<int>(e)]; }
  const std::vector<Instruction>& stream(Engine e) const { return engines[static_cast<int>(e)]; }
  size_t instruction_count() const;
};

struct Program {
  std::string name;
  std::vector<HbmTensor> tensors;
  std::vector<CoreProgram> cores;
  uint32_t semaphores = 0;
  size_t instruction_count() const;
  int tensor_index(std::string_view name) const;  // -1 if absent
};

// A unit that runs one stream: a compute engine or DMA queue `queue` of core `core`.
struct UnitId {
  uint16_t core = 0;
  Engine engine = Engine::Tensor;
  uint16_t queue = 0;  // DMA only
  std::string name() const;  // "core0.TensorE", "core0.dma3"
  bool operator==(const UnitId&) const = default;
};

}  // namespace trnsim::isa
