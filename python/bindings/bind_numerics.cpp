// Python bindings of the numerics layer (filled by the numerics work).
#include "registry.h"
namespace {
void bind(nanobind::module_&) {}
trnsim::bindings::Register reg{10, bind};
}  // namespace
