#include "trnsim/core/hbm.h"

#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/error.h"
#include "trnsim/common/limits.h"
#include "trnsim/core/buffer_pool.h"

namespace trnsim::core {

namespace {
// A whole tensor as a [1, elements] pattern.
isa::AccessPattern whole(const isa::HbmTensor& t, uint32_t id) {
  isa::AccessPattern ap;
  ap.space = isa::Space::HBM;
  ap.dtype = t.dtype;
  ap.tensor = id;
  ap.partitions = 1;
  ap.ndims = 1;
  ap.dims[0] = {1, static_cast<int32_t>(t.elements())};
  return ap;
}
}  // namespace

Hbm::Hbm(const isa::Program& program, bool functional,
         const std::map<std::string, std::span<const float>>& inputs)
    : program_(program) {
  if (!functional) return;
  double total = 0;
  for (const auto& t : program.tensors) total += static_cast<double>(t.bytes());
  check_memory(total, fmt::format("functional run of '{}' ({} HBM tensors)", program.name, program.tensors.size()),
               "the timing-only mode (--timing-only) needs none of it");
  data_.resize(program.tensors.size());
  for (uint32_t i = 0; i < program.tensors.size(); ++i) {
    const auto& t = program.tensors[i];
    data_[i] = take_bytes(static_cast<size_t>(t.bytes()));
    // NaN until written. An input of whole-byte elements is overwritten whole, so it skips the
    // fill; packed formats (fp4, MX scales) keep it so their spare bits are deterministic.
    const bool overwritten = t.kind == isa::HbmTensor::Kind::Input && t.bytes() * 8 == t.elements() * numerics::info(t.dtype).bits;
    if (!overwritten) std::fill(data_[i].begin(), data_[i].end(), uint8_t{0xFF});
    if (t.kind != isa::HbmTensor::Kind::Input) continue;
    auto it = inputs.find(t.name);
    if (it == inputs.end())
      throw Error(fmt::format("run: no values given for input tensor '{}'", t.name));
    if (static_cast<int64_t>(it->second.size()) != t.elements())
      throw ShapeError(fmt::format("run: input '{}' has {} values but its shape holds {}", t.name,
                                   it->second.size(), t.elements()));
    write_tile(whole(t, i), base(i), it->second.data());
  }
  for (const auto& [name, v] : inputs)
    if (program.tensor_index(name) < 0)
      throw Error(fmt::format("run: input '{}' is not a tensor of program '{}'", name, program.name));
}

Hbm::~Hbm() {
  for (auto& d : data_) give_back(std::move(d));
}

std::vector<float> Hbm::read(uint32_t tensor) const {
  const auto& t = program_.tensors[tensor];
  std::vector<float> out(static_cast<size_t>(t.elements()));
  auto* self = const_cast<Hbm*>(this);
  read_tile(whole(t, tensor), self->base(tensor), out.data());
  return out;
}

}  // namespace trnsim::core
