#include "trnsim/kernels/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "trnsim/common/error.h"
#include "trnsim/kernels/activation.h"
#include "trnsim/kernels/attention.h"
#include "trnsim/kernels/layernorm.h"
#include "trnsim/kernels/rmsnorm.h"
#include "trnsim/kernels/softmax.h"
#include "trnsim/kernels/transpose.h"

namespace trnsim::kernels {

KernelDef matmul_optimized_def();  // registry_matmul.cpp
KernelDef matmul_naive_def();

int64_t KernelArgs::i(const std::string& name) const {
  auto it = ints.find(name);
  if (it == ints.end()) throw Error(fmt::format("kernel argument '{}' is not an integer parameter", name));
  return it->second;
}

const std::string& KernelArgs::choice(const std::string& name) const {
  auto it = choices.find(name);
  if (it == choices.end()) throw Error(fmt::format("kernel argument '{}' is not a choice parameter", name));
  return it->second;
}

// An explicit list, not self-registration: the kernels live in a static library, whose
// unreferenced objects (and their registrars) the linker would drop.
const std::vector<KernelDef>& kernel_registry() {
  static const std::vector<KernelDef> all = [] {
    std::vector<KernelDef> v = {matmul_optimized_def(), matmul_naive_def(), softmax_def(), layernorm_def(),
                                rmsnorm_def(), activation_def(), transpose_def(), attention_def()};
    std::sort(v.begin(), v.end(), [](const KernelDef& a, const KernelDef& b) { return a.name < b.name; });
    return v;
  }();
  return all;
}

std::string kernel_names() {
  std::string s;
  for (const auto& k : kernel_registry()) s += fmt::format("{}{}", s.empty() ? "" : ", ", k.name);
  return s;
}

const KernelDef& find_kernel(std::string_view name) {
  for (const auto& k : kernel_registry())
    if (k.name == name) return k;
  throw UnsupportedError(fmt::format("no kernel '{}'; the library has: {}", name, kernel_names()));
}

std::string canonical_param_name(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

KernelArgs resolve_args(const KernelDef& k, const std::map<std::string, std::string>& given, std::string_view dtype) {
  KernelArgs a;
  a.dtype = k.dtypes.front();
  if (!dtype.empty()) {
    a.dtype = numerics::dtype_from_string(dtype);
    if (std::find(k.dtypes.begin(), k.dtypes.end(), a.dtype) == k.dtypes.end()) {
      std::string ok;
      for (DType t : k.dtypes) ok += fmt::format("{}{}", ok.empty() ? "" : ", ", numerics::name(t));
      throw UnsupportedError(fmt::format("kernel {} does not take dtype {}; it takes {}", k.name, dtype, ok));
    }
  }
  std::map<std::string, std::string> named;
  for (const auto& [key, value] : given) named[canonical_param_name(key)] = value;
  for (const auto& [key, value] : named) {
    bool known = std::any_of(k.params.begin(), k.params.end(), [&](const KernelParam& p) { return p.name == key; });
    if (!known) {
      std::string ok;
      for (const auto& p : k.params) ok += fmt::format("{}--{}", ok.empty() ? "" : " ", p.name);
      throw ShapeError(fmt::format("kernel {} has no parameter '{}'; its parameters: {}", k.name, key, ok));
    }
  }
  for (const auto& p : k.params) {
    auto it = named.find(p.name);
    if (p.kind == KernelParam::Kind::Choice) {
      std::string v = it == named.end() ? p.choices.front() : it->second;
      if (std::find(p.choices.begin(), p.choices.end(), v) == p.choices.end())
        throw ShapeError(fmt::format("kernel {}: --{} '{}' is none of: {}", k.name, p.name, v, fmt::join(p.choices, ", ")));
      a.choices[p.name] = v;
      continue;
    }
    int64_t v = p.default_int;
    if (it != named.end()) {
      const std::string& t = it->second;
      if (p.kind == KernelParam::Kind::Flag && (t == "true" || t == "True" || t == "")) v = 1;
      else if (p.kind == KernelParam::Kind::Flag && (t == "false" || t == "False")) v = 0;
      else {
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || end != t.data() + t.size())
          throw ShapeError(fmt::format("kernel {}: --{} must be an integer, got '{}'", k.name, p.name, t));
      }
    }
    if (v < p.min || v > p.max)
      throw ShapeError(fmt::format("kernel {}: --{} {} is outside [{}, {}]", k.name, p.name, v, p.min, p.max));
    a.ints[p.name] = v;
  }
  return a;
}

}  // namespace trnsim::kernels
