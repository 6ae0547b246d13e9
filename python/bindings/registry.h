// Each bind_<layer>.cpp registers a function that adds its layer to trnsim._core, so binding
// files do not need to know about each other. `order` follows the layering (lower first).
#pragma once
#include <nanobind/nanobind.h>

#include <functional>
#include <vector>

namespace trnsim::bindings {

struct Binder {
  int order;
  void (*bind)(nanobind::module_&);
};

inline std::vector<Binder>& binders() {
  static std::vector<Binder> all;
  return all;
}

struct Register {
  Register(int order, void (*fn)(nanobind::module_&)) { binders().push_back({order, fn}); }
};

}  // namespace trnsim::bindings
