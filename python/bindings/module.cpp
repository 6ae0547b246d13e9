// trnsim._core: the extension module. Each C++ layer binds itself in its own file
// (bind_<layer>.cpp) through bindings::Register; this file only runs them in layer order.
#include <nanobind/nanobind.h>

#include <algorithm>
#include <new>
#include <string>

#include "registry.h"
#include "trnsim/common/error.h"
#include "trnsim/common/limits.h"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "trnsim C++ core";
  m.attr("__version__") = TRNSIM_VERSION;
  m.def("memory_limit_bytes", &trnsim::memory_limit_bytes,
        "host memory any one job may use: TRNSIM_MAX_MEMORY, or half the machine's physical memory");
  // trnsim errors surface as Python exceptions of matching names, subclasses of ValueError so
  // that callers who only know the standard library still catch them.
  static PyObject* trnsim_error = nullptr;
  // Any other C++ exception reaching Python is a TrnsimError too ("internal error: ..."), never
  // a raw ValueError/IndexError/MemoryError from nanobind's defaults. Registered first, so it
  // is tried after the typed translators below; nanobind's own exceptions pass through.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const nb::python_error&) {
      throw;
    } catch (const nb::builtin_exception&) {
      throw;
    } catch (const trnsim::Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      PyErr_SetString(trnsim_error, "out of host memory (std::bad_alloc): the input needs more memory than is available");
    } catch (const std::exception& e) {
      PyErr_SetString(trnsim_error, (std::string("internal error: ") + e.what()).c_str());
    }
  });
  auto base = nb::exception<trnsim::Error>(m, "TrnsimError", PyExc_ValueError);
  trnsim_error = base.ptr();
  nb::exception<trnsim::ConfigError>(m, "ConfigError", base.ptr());
  nb::exception<trnsim::ShapeError>(m, "ShapeError", base.ptr());
  auto unsupported = nb::exception<trnsim::UnsupportedError>(m, "UnsupportedError", base.ptr());
  // ConstantRequiredError also carries the tensors it names, as the attribute `tensors`.
  // Translators registered later are tried first, so this one wins over the plain mapping.
  auto constant_required =
      nb::exception<trnsim::ConstantRequiredError>(m, "ConstantRequiredError", unsupported.ptr());
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* payload) {
        try {
          std::rethrow_exception(p);
        } catch (const trnsim::ConstantRequiredError& e) {
          nb::handle type(static_cast<PyObject*>(payload));
          nb::list tensors;
          for (const auto& t : e.tensors()) tensors.append(nb::str(t.c_str()));
          nb::object exc = type(nb::str(e.what()));
          exc.attr("tensors") = tensors;
          PyErr_SetObject(type.ptr(), exc.ptr());
        }
      },
      constant_required.ptr());
  auto& all = trnsim::bindings::binders();
  std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (auto& b : all) b.bind(m);
}
