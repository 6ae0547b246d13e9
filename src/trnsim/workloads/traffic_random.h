// Random draws of the traffic generators, from the 64-bit Mersenne Twister only: std::
// distributions use different algorithms in different standard libraries, and a serving run
// must be bit-identical for a seed everywhere.
#pragma once
#include <cmath>
#include <random>

namespace trnsim::workloads::draw {

// Uniform in (0, 1): never 0, so logarithms are finite.
inline double uniform01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
inline double exponential(std::mt19937_64& rng, double rate) { return -std::log(uniform01(rng)) / rate; }
inline double normal(std::mt19937_64& rng) {  // Box-Muller, one of the pair
  const double u1 = uniform01(rng), u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}
// Gamma(shape, scale 1), Marsaglia and Tsang (2000).
inline double gamma(std::mt19937_64& rng, double shape) {
  if (shape < 1.0) return gamma(rng, shape + 1.0) * std::pow(uniform01(rng), 1.0 / shape);
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = normal(rng);
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    if (std::log(uniform01(rng)) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

}  // namespace trnsim::workloads::draw
