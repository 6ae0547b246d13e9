#include "trnsim/core/neuron_core.h"

#include <fmt/format.h>

#include "trnsim/core/chip.h"
#include "trnsim/core/dma_queue.h"
#include "trnsim/core/gpsimd_engine.h"
#include "trnsim/core/scalar_engine.h"
#include "trnsim/core/tensor_engine.h"
#include "trnsim/core/vector_engine.h"

namespace trnsim::core {

using isa::Engine;
using isa::UnitId;

NeuronCore::NeuronCore(Chip& chip, int index, const isa::CoreProgram& program)
    : chip_(chip),
      index_(index),
      sbuf_(chip.spec().core.sbuf, chip.functional()),
      psum_(chip.spec().core.psum, chip.functional()) {
  const auto& dma = chip.spec().core.dma;
  dma_res_ = chip.network().add_resource(fmt::format("core{}.dma", index),
                                         GBps(dma.engines * dma.bandwidth_per_engine.value()));
  auto c = static_cast<uint16_t>(index);
  units_.push_back(std::make_unique<TensorEngine>(chip, *this, UnitId{c, Engine::Tensor, 0}, program.stream(Engine::Tensor)));
  units_.push_back(std::make_unique<VectorEngine>(chip, *this, UnitId{c, Engine::Vector, 0}, program.stream(Engine::Vector)));
  units_.push_back(std::make_unique<ScalarEngine>(chip, *this, UnitId{c, Engine::Scalar, 0}, program.stream(Engine::Scalar)));
  units_.push_back(std::make_unique<GpSimdEngine>(chip, *this, UnitId{c, Engine::GpSimd, 0}, program.stream(Engine::GpSimd)));
  for (size_t q = 0; q < program.dma_queues.size(); ++q)
    units_.push_back(std::make_unique<DmaQueue>(chip, *this, UnitId{c, Engine::Dma, static_cast<uint16_t>(q)},
                                                program.dma_queues[q]));
}

NeuronCore::~NeuronCore() = default;

const hw::CoreSpec& NeuronCore::spec() const { return chip_.spec().core; }

PartitionBase NeuronCore::memory(const isa::AccessPattern& ap) {
  switch (ap.space) {
    case isa::Space::SBUF: return sbuf_.base();
    case isa::Space::PSUM: return psum_.base();
    case isa::Space::HBM: return chip_.hbm().base(ap.tensor);
  }
  return {};
}

float* NeuronCore::scratch(size_t n, int slot) {
  auto& v = scratch_[slot];
  if (v.size() < n) v.resize(n);
  return v.data();
}

float* NeuronCore::read(const isa::AccessPattern& ap, int slot) {
  float* buf = scratch(static_cast<size_t>(ap.elements()), slot);
  read_tile(ap, memory(ap), buf);
  return buf;
}

void NeuronCore::write(const isa::AccessPattern& ap, const float* values) {
  write_tile(ap, memory(ap), values);
}

float NeuronCore::scalar(const isa::ScalarOperand& s, int p) {
  return s.is_tensor ? read_element(s.ap, memory(s.ap), p, 0) : s.imm;
}

}  // namespace trnsim::core
