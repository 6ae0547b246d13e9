// The plain-loop reference run of a one-core test program (isa/reference.h) over host memories,
// shared by the engine tests: queue 0's DMAs, then every engine's stream, then queue 1's.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "trnsim/core/tile_io.h"
#include "trnsim/isa/program.h"
#include "trnsim/isa/reference.h"

namespace trnsim::isa {

// Host memories for the reference: HBM tensors, SBUF and PSUM as bytes (NaN-filled).
class RefMemory : public ElementMemory {
 public:
  explicit RefMemory(const Program& p)
      : sbuf_(128 * 196608, 0xFF), psum_(128 * 16384, 0xFF), prog_(p) {
    for (auto& t : p.tensors) hbm_.emplace_back(static_cast<size_t>(t.bytes()), 0xFF);
  }
  core::PartitionBase base(const AccessPattern& ap) const {
    auto* self = const_cast<RefMemory*>(this);
    if (ap.space == Space::HBM) return {self->hbm_[ap.tensor].data(), 0};
    if (ap.space == Space::PSUM) return {self->psum_.data(), 16384};
    return {self->sbuf_.data(), 196608};
  }
  float load(const AccessPattern& ap, int p, int64_t i) const override { return core::read_element(ap, base(ap), p, i); }
  void store(const AccessPattern& ap, int p, int64_t i, float v) override { core::write_element(ap, base(ap), p, i, v); }

 private:
  std::vector<uint8_t> sbuf_, psum_;
  std::vector<std::vector<uint8_t>> hbm_;
  const Program& prog_;
};

// Engines run in `order` (default: stream order Tensor, Vector, Scalar, GpSimd); semaphores are
// not modelled, so a program whose engines feed each other passes the order they run in.
inline std::vector<float> run_reference(const Program& p, const std::map<std::string, std::vector<float>>& inputs,
                                        std::vector<Engine> order = {Engine::Tensor, Engine::Vector, Engine::Scalar, Engine::GpSimd}) {
  RefMemory mem(p);
  for (uint32_t t = 0; t < p.tensors.size(); ++t) {
    auto it = inputs.find(p.tensors[t].name);
    if (it == inputs.end()) continue;
    AccessPattern whole = tile_ap(Space::SBUF, 0, 1, 0, p.tensors[t].elements(), p.tensors[t].dtype);
    whole.space = Space::HBM;
    whole.tensor = t;
    for (int64_t i = 0; i < p.tensors[t].elements(); ++i) mem.store(whole, 0, i, it->second[i]);
  }
  const auto& c = p.cores[0];
  for (auto& ins : c.dma_queues[0]) reference_execute(ins.op, mem);
  for (Engine e : order)
    for (auto& ins : c.engines[static_cast<int>(e)]) reference_execute(ins.op, mem);
  for (auto& ins : c.dma_queues[1]) reference_execute(ins.op, mem);
  const auto& o = p.tensors.back();
  AccessPattern whole = tile_ap(Space::SBUF, 0, 1, 0, o.elements(), o.dtype);
  whole.space = Space::HBM;
  whole.tensor = static_cast<uint32_t>(p.tensors.size() - 1);
  std::vector<float> r(o.elements());
  for (int64_t i = 0; i < o.elements(); ++i) r[i] = mem.load(whole, 0, i);
  return r;
}

}  // namespace trnsim::isa
