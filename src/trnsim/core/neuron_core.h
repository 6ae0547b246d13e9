// A NeuronCore: SBUF, PSUM, the four compute engines and the DMA queues of one core's program,
// each running its own stream concurrently with the others.
#pragma once
#include <memory>
#include <vector>

#include "trnsim/core/psum.h"
#include "trnsim/core/sbuf.h"
#include "trnsim/core/unit.h"
#include "trnsim/isa/program.h"
#include "trnsim/sim/resource.h"

namespace trnsim::core {

class Chip;

class NeuronCore {
 public:
  NeuronCore(Chip& chip, int index, const isa::CoreProgram& program);
  ~NeuronCore();
  int index() const { return index_; }
  const hw::CoreSpec& spec() const;
  Chip& chip() { return chip_; }
  Sbuf& sbuf() { return sbuf_; }
  Psum& psum() { return psum_; }
  int dma_resource() const { return dma_res_; }  // the core's DMA engines (bandwidth pool)

  // Where an access pattern's bytes live (SBUF/PSUM of this core, or the chip's HBM).
  PartitionBase memory(const isa::AccessPattern& ap);
  // Bulk fp32 access for the engines' functional paths; read returns a scratch buffer owned by
  // the core (valid until the next read into the same slot, 0..3).
  float* read(const isa::AccessPattern& ap, int slot);
  void write(const isa::AccessPattern& ap, const float* values);
  // src -> dst as a DMA moves it: bytes when the dtypes match, through fp32 otherwise.
  void copy(const isa::AccessPattern& src, const isa::AccessPattern& dst);
  float* scratch(size_t n, int slot);  // an uninitialised buffer of n floats
  float scalar(const isa::ScalarOperand& s, int p);  // per-partition scalar operand

  std::vector<std::unique_ptr<Unit>>& units() { return units_; }

  // NeuronCore-v2 shared ports (CoreSpec::shared_sbuf_port_vector_gpsimd,
  // shared_psum_port_vector_scalar): VectorE and GpSimd share one SBUF port, VectorE and
  // ScalarE one PSUM port; an instruction that needs a held port waits for its release.
  enum Port : uint8_t { kSbufPort = 1, kPsumPort = 2 };
  // The shared ports (bitmask) instruction `op` of `engine` needs on this core (0 if none).
  uint8_t ports(isa::Engine engine, const isa::Op& op) const;
  // Whether `engine` may ever need a shared port here.
  bool shares_ports(isa::Engine engine) const;
  sim::Time ports_free_at(uint8_t ports) const;
  void hold_ports(uint8_t ports, sim::Time end);

 private:
  void note(const isa::AccessPattern& ap);  // stamps an on-chip write (TensorE's operand cache)
  Chip& chip_;
  int index_;
  Sbuf sbuf_;
  Psum psum_;
  int dma_res_ = -1;
  std::vector<std::unique_ptr<Unit>> units_;
  RawFloats scratch_[4];
  sim::ExclusiveResource sbuf_port_;  // VectorE + GpSimd (when shared)
  sim::ExclusiveResource psum_port_;  // VectorE + ScalarE (when shared)
};

}  // namespace trnsim::core
