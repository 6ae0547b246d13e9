#include "trnsim/isa/program.h"

#include <fmt/format.h>

#include "trnsim/common/checked.h"

namespace trnsim::isa {

int64_t HbmTensor::elements() const { return checked_numel(shape, "HBM tensor '" + name + "'"); }

int64_t HbmTensor::bytes() const {
  int bits = numerics::info(dtype).bits;
  return checked_mul(elements(), bits >= 8 ? bits / 8 : 1, "HBM tensor '" + name + "'");
}

size_t CoreProgram::instruction_count() const {
  size_t n = 0;
  for (auto& s : engines) n += s.size();
  for (auto& q : dma_queues) n += q.size();
  return n;
}

size_t Program::instruction_count() const {
  size_t n = 0;
  for (auto& c : cores) n += c.instruction_count();
  return n;
}

int Program::tensor_index(std::string_view n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}

std::string UnitId::name() const {
  if (engine == Engine::Dma) return fmt::format("core{}.dma{}", core, queue);
  return fmt::format("core{}.{}", core, engine_name(engine));
}

}  // namespace trnsim::isa
