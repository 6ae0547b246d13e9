#include "trnsim/core/energy_model.h"

#include <type_traits>
#include <variant>

namespace trnsim::core {

EnergyModel::EnergyModel(const hw::EnergySpec& e) : modelled_(e.modelled) {
  const double dyn = e.dynamic_scale();
  for (auto& [t, j] : e.tensor_per_mac) mac_j_[static_cast<int>(t)] = j.value() * dyn;
  vector_j_ = e.vector_per_element.value() * dyn;
  scalar_j_ = e.scalar_per_element.value() * dyn;
  gpsimd_j_ = e.gpsimd_per_element.value() * dyn;
  sbuf_j_ = e.sbuf_per_byte.value() * dyn;
  psum_j_ = e.psum_per_byte.value() * dyn;
  hbm_j_ = e.hbm_per_byte.value();
  static_w_ = e.static_power.value() * e.voltage_scale;
}

namespace {

struct Access {
  double onchip_j = 0, hbm_j = 0;
};

// Bytes of every operand, priced by the memory it lives in.
Access operand_energy(const isa::Op& op, double sbuf, double psum, double hbm) {
  Access a;
  auto add = [&](const isa::AccessPattern& p) {
    const double b = static_cast<double>(p.bytes());
    if (p.space == isa::Space::SBUF) a.onchip_j += b * sbuf;
    else if (p.space == isa::Space::PSUM) a.onchip_j += b * psum;
    else a.hbm_j += b * hbm;
  };
  auto add_scalar = [&](const isa::ScalarOperand& s) { if (s.is_tensor) add(s.ap); };
  std::visit([&](const auto& o) {
    using T = std::decay_t<decltype(o)>;
    if constexpr (std::is_same_v<T, isa::Dma>) {
      add(o.dst);
      isa::AccessPattern src = o.src;  // a gather reads as many bytes as it writes
      if (o.indirect) { src = o.dst; src.space = o.src.space; }
      add(src);
      if (o.indirect) add(o.index);
    } else if constexpr (!std::is_same_v<T, isa::Nop>) {
      if constexpr (requires { o.out; }) add(o.out);
      if constexpr (requires { o.in; }) add(o.in);
      if constexpr (requires { o.in0; }) { add(o.in0); add(o.in1); }
      if constexpr (requires { o.stationary; }) { add(o.stationary); add(o.moving); }
      if constexpr (requires { o.stationary_scale; }) { add(o.stationary_scale); add(o.moving_scale); }
      if constexpr (requires { o.out_scale; }) add(o.out_scale);
      if constexpr (requires { o.pred; }) { add(o.pred); add(o.on_true); add(o.on_false); }
      if constexpr (requires { o.index; }) add(o.index);
      if constexpr (requires { o.s0; }) { add_scalar(o.s0); add_scalar(o.s1); }
      if constexpr (std::is_same_v<T, isa::Activation>) {
        add_scalar(o.scale); add_scalar(o.bias);
        if (o.has_accum) add(o.accum);
      }
    }
  }, op);
  return a;
}

}  // namespace

InstructionEnergy EnergyModel::of(const isa::Op& op, isa::Engine engine) const {
  if (!modelled_) return {};
  const Access a = operand_energy(op, sbuf_j_, psum_j_, hbm_j_);
  InstructionEnergy e{a.onchip_j, a.hbm_j};
  const double work = isa::op_flops(op);  // TensorE: 2 x MACs; others: elements
  switch (engine) {
    case isa::Engine::Tensor: {
      // Only matmuls and transposes use the PE array; barriers (Nop) of a linked program do not.
      const isa::AccessPattern* in = nullptr;
      if (const auto* m = std::get_if<isa::Matmul>(&op)) in = &m->moving;
      else if (const auto* t = std::get_if<isa::Transpose>(&op)) in = &t->in;
      if (in) e.unit_j += 0.5 * work * mac_j_[static_cast<int>(in->dtype)];
      if (const auto* mx = std::get_if<isa::MatmulMx>(&op))  // priced as its MX format's MAC
        e.unit_j += 0.5 * work * mac_j_[static_cast<int>(isa::mx_block_dtype(mx->moving.dtype).value_or(mx->moving.dtype))];
      break;
    }
    case isa::Engine::Vector: e.unit_j += work * vector_j_; break;
    case isa::Engine::Scalar: e.unit_j += work * scalar_j_; break;
    case isa::Engine::GpSimd: e.unit_j += work * gpsimd_j_; break;
    default: break;
  }
  return e;
}

}  // namespace trnsim::core
