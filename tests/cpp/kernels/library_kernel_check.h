// Runs a library kernel from the registry in functional mode on seeded inputs and compares
// every output with the kernel's double-precision reference, elementwise within
// |got - want| <= abs + rel * |want| (the kernel's stated tolerance for the dtype).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>

#include "trnsim/common/error.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/kernels/registry.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::kernels::testing {

struct CheckedRun {
  core::RunResult result;
  Tensors inputs;           // rounded to their dtypes
  ReferenceOutputs want;
  uint64_t violations = 0;
  double max_abs_error = 0;
};

// The same on a given chip spec (e.g. a preset with a smaller SBUF).
inline CheckedRun run_checked_on(const std::string& kernel, const hw::ChipSpec& chip,
                                 const std::map<std::string, std::string>& params, const std::string& dtype,
                                 Tensors given = {}, uint64_t seed = 1) {
  const std::string& chip_name = chip.name;
  const KernelDef& k = find_kernel(kernel);
  const KernelArgs a = resolve_args(k, params, dtype);
  const isa::Program p = k.build(chip, a);
  CheckedRun r;
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto& t = p.tensors[i];
    if (t.kind != isa::HbmTensor::Kind::Input) continue;
    std::vector<float> v;
    if (given.count(t.name)) {
      v = given.at(t.name);
    } else {
      auto [lo, hi] = k.input_range ? k.input_range(a, t.name) : std::pair{-1.0, 1.0};
      std::mt19937_64 rng(seed * 7919 + i);
      std::uniform_real_distribution<double> u(lo, hi);
      v.resize(t.elements());
      for (auto& x : v) x = static_cast<float>(u(rng));
    }
    numerics::quantize(v, t.dtype);
    r.inputs[t.name] = std::move(v);
  }
  r.result = core::run(p, chip, r.inputs);
  r.want = k.reference(a, r.inputs);
  const Tolerance tol = k.tolerance(a);
  for (const auto& [name, want] : r.want) {
    const auto& got = r.result.outputs.at(name);
    EXPECT_EQ(got.size(), want.size()) << name;
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
      const double err = std::fabs(double(got[i]) - want[i]);
      if (!(err <= tol.abs + tol.rel * std::fabs(want[i]))) {
        if (r.violations++ < 5)
          ADD_FAILURE() << kernel << " " << dtype << " " << name << "[" << i << "] = " << got[i] << ", want "
                        << want[i] << " (tolerance " << tol.abs << " + " << tol.rel << "|want|)";
      }
      if (!std::isnan(err)) r.max_abs_error = std::max(r.max_abs_error, err);
    }
  }
  EXPECT_EQ(r.violations, 0u) << kernel << " on " << chip_name << " " << dtype;
  return r;
}

inline CheckedRun run_checked(const std::string& kernel, const std::string& chip_name,
                              const std::map<std::string, std::string>& params, const std::string& dtype,
                              Tensors given = {}, uint64_t seed = 1) {
  return run_checked_on(kernel, hw::load_chip(chip_name), params, dtype, std::move(given), seed);
}

}  // namespace trnsim::kernels::testing
