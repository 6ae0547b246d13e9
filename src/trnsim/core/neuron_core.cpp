#include "trnsim/core/neuron_core.h"

#include <fmt/format.h>

#include "trnsim/core/buffer_pool.h"
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

NeuronCore::~NeuronCore() {
  for (auto& v : scratch_) give_back(std::move(v));
}

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
  if (v.size() < n) {
    give_back(std::move(v));
    v = take_floats(n);  // a recycled buffer: no fresh pages on every run
  }
  return v.data();
}

float* NeuronCore::read(const isa::AccessPattern& ap, int slot) {
  float* buf = scratch(static_cast<size_t>(ap.elements()), slot);
  read_tile(ap, memory(ap), buf);
  return buf;
}

void NeuronCore::copy(const isa::AccessPattern& src, const isa::AccessPattern& dst) {
  if (!copy_tile(src, memory(src), dst, memory(dst))) return write(dst, read(src, 0));
  note(dst);
}

void NeuronCore::write(const isa::AccessPattern& ap, const float* values) {
  write_tile(ap, memory(ap), values);
  note(ap);
}

void NeuronCore::note(const isa::AccessPattern& ap) {
  if (ap.space != isa::Space::HBM) {  // keeps TensorE's decoded-operand cache honest
    const auto [lo, hi] = ap.byte_extent();
    (ap.space == isa::Space::SBUF ? static_cast<Scratchpad&>(sbuf_) : psum_).note_write(lo, hi);
  }
}

namespace {
// Bitmask of the on-chip spaces an instruction's operands touch (1: SBUF, 2: PSUM).
uint8_t spaces(const isa::Op& op) {
  uint8_t m = 0;
  const isa::Operands ops = isa::operands_of(op);
  for (const auto* list : {&ops.reads, &ops.writes})
    for (const isa::AccessPattern* a : *list) {
      if (a->space == isa::Space::SBUF) m |= 1;
      else if (a->space == isa::Space::PSUM) m |= 2;
    }
  return m;
}
}  // namespace

bool NeuronCore::shares_ports(isa::Engine e) const {
  const auto& c = spec();
  switch (e) {
    case isa::Engine::Vector: return c.shared_sbuf_port_vector_gpsimd || c.shared_psum_port_vector_scalar;
    case isa::Engine::GpSimd: return c.shared_sbuf_port_vector_gpsimd;
    case isa::Engine::Scalar: return c.shared_psum_port_vector_scalar;
    default: return false;
  }
}

uint8_t NeuronCore::ports(isa::Engine e, const isa::Op& op) const {
  if (!shares_ports(e)) return 0;
  const auto& c = spec();
  const uint8_t s = spaces(op);
  uint8_t p = 0;
  if ((s & 1) && c.shared_sbuf_port_vector_gpsimd && (e == isa::Engine::Vector || e == isa::Engine::GpSimd)) p |= kSbufPort;
  if ((s & 2) && c.shared_psum_port_vector_scalar && (e == isa::Engine::Vector || e == isa::Engine::Scalar)) p |= kPsumPort;
  return p;
}

sim::Time NeuronCore::ports_free_at(uint8_t p) const {
  sim::Time t;
  if (p & kSbufPort) t = sim::max(t, sbuf_port_.free_at());
  if (p & kPsumPort) t = sim::max(t, psum_port_.free_at());
  return t;
}

void NeuronCore::hold_ports(uint8_t p, sim::Time end) {
  if (p & kSbufPort) sbuf_port_.hold_until(end);
  if (p & kPsumPort) psum_port_.hold_until(end);
}

float NeuronCore::scalar(const isa::ScalarOperand& s, int p) {
  return s.is_tensor ? read_element(s.ap, memory(s.ap), p, 0) : s.imm;
}

}  // namespace trnsim::core
