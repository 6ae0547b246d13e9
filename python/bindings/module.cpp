// trnsim._core: the extension module. Each C++ layer binds itself in its own file
// (bind_<layer>.cpp) through bindings::Register; this file only runs them in layer order.
#include <nanobind/nanobind.h>

#include <algorithm>

#include "registry.h"
#include "trnsim/common/error.h"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "trnsim C++ core";
  m.attr("__version__") = TRNSIM_VERSION;
  // trnsim errors surface as Python exceptions of matching names, subclasses of ValueError so
  // that callers who only know the standard library still catch them.
  auto base = nb::exception<trnsim::Error>(m, "TrnsimError", PyExc_ValueError);
  nb::exception<trnsim::ConfigError>(m, "ConfigError", base.ptr());
  nb::exception<trnsim::ShapeError>(m, "ShapeError", base.ptr());
  nb::exception<trnsim::UnsupportedError>(m, "UnsupportedError", base.ptr());
  auto& all = trnsim::bindings::binders();
  std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& b : all) b.bind(m);
}
