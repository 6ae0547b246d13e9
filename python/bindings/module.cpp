// trnsim._core: the extension module. Each C++ layer binds itself in its own file
// (bind_<layer>.cpp) through a function declared here.
#include <nanobind/nanobind.h>

#include "trnsim/common/error.h"

namespace nb = nanobind;

void bind_numerics(nb::module_& m);
void bind_hw(nb::module_& m);

NB_MODULE(_core, m) {
  m.doc() = "trnsim C++ core";
  m.attr("__version__") = TRNSIM_VERSION;
  // trnsim errors surface as Python exceptions of matching names (subclasses of ValueError so
  // that callers who only know the standard library still catch them).
  static nb::object base = nb::exception<trnsim::Error>(m, "TrnsimError", PyExc_ValueError);
  nb::exception<trnsim::ConfigError>(m, "ConfigError", base.ptr());
  nb::exception<trnsim::ShapeError>(m, "ShapeError", base.ptr());
  nb::exception<trnsim::UnsupportedError>(m, "UnsupportedError", base.ptr());
  bind_numerics(m);
  bind_hw(m);
}
