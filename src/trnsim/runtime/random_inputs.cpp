#include "trnsim/runtime/random_inputs.h"

#include <random>

#include "trnsim/numerics/convert.h"

namespace trnsim::runtime {

std::map<std::string, std::vector<float>> random_inputs(const compiler::CompiledModel& m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, std::vector<float>> in;
  for (const auto& name : m.inputs) {
    const auto type = m.graph.tensor(name).type;
    std::vector<float> v(static_cast<size_t>(compiler::numel(m.shapes.at(name))));
    for (auto& x : v) {
      // 53 random bits -> [0, 1), portable (std::uniform_real_distribution is not).
      double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
      if (type == compiler::ElemType::Bool) x = u < 0.5f ? 0.0f : 1.0f;
      else if (compiler::is_integral(type)) x = static_cast<float>(static_cast<int>(u * 10));
      else x = static_cast<float>(2 * u - 1);
      if (compiler::is_narrow_float(type)) {  // a value of the format (fp8/fp4 inputs)
        const auto dt = compiler::narrow_dtype(type);
        x = numerics::decode(numerics::encode(x, dt), dt);
      }
    }
    in[name] = std::move(v);
  }
  return in;
}

}  // namespace trnsim::runtime
