#include "trnsim/report/op_facts.h"

#include <type_traits>
#include <variant>

namespace trnsim::report {

std::optional<numerics::DType> op_dtype(const isa::Op& op) {
  return std::visit(
      [](const auto& o) -> std::optional<numerics::DType> {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, isa::Matmul>) return o.stationary.dtype;
        else if constexpr (std::is_same_v<T, isa::MatmulMx>) return isa::mx_block_dtype(o.stationary.dtype).value_or(o.stationary.dtype);
        else if constexpr (std::is_same_v<T, isa::Dma>) return o.dst.dtype;
        else if constexpr (requires { o.out; }) return o.out.dtype;
        else return std::nullopt;
      },
      op);
}

double op_hbm_bytes(const isa::Op& op) {
  const auto* d = std::get_if<isa::Dma>(&op);
  if (!d) return 0;
  double b = 0;
  // An indirect DMA reads only the rows it selects: as many bytes as one row per dst partition.
  if (d->src.space == isa::Space::HBM) b += static_cast<double>(d->indirect ? d->dst.elements() * d->src.element_bytes() : d->src.bytes());
  if (d->dst.space == isa::Space::HBM) b += static_cast<double>(d->dst.bytes());
  return b;
}

}  // namespace trnsim::report
