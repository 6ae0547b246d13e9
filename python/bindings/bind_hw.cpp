// Python bindings of the hw layer: trnsim._core.hw. Specs cross as JSON text built by the same
// C++ code as `trnsim specs --json` (hw/specs_report.h), so Python and the command line show
// identical numbers; python/trnsim/hw.py turns the text into dicts.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "registry.h"
#include "trnsim/common/error.h"
#include "trnsim/hw/preset_registry.h"
#include "trnsim/hw/spec_json.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/hw/specs_report.h"
#include "trnsim/common/json_text.h"

namespace nb = nanobind;
using namespace trnsim::hw;

namespace {

using Names = std::optional<std::vector<std::string>>;

void bind(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("hw", "Chip and system specs (configs/*.yaml)");
  m.def(
      "specs_json",
      [](const Names& chips, const Names& systems) {
        return trnsim::json_text(specs_json(select_specs(chips.value_or(std::vector<std::string>{}),
                                                         systems.value_or(std::vector<std::string>{}))));
      },
      nb::arg("chips") = nb::none(), nb::arg("systems") = nb::none(),
      "JSON of the named chips and systems (preset names or file paths); all presets if none named");
  m.def(
      "load_chip_json", [](const std::string& name_or_path) { return trnsim::json_text(to_json(load_chip(name_or_path))); },
      nb::arg("name_or_path"), "JSON of one chip, from a preset name or a YAML file");
  m.def(
      "load_system_json",
      [](const std::string& name_or_path) { return trnsim::json_text(to_json(load_system(name_or_path))); },
      nb::arg("name_or_path"), "JSON of one system, from a preset name or a YAML file");
  m.def(
      "preset_names", [](const std::string& kind) {
        if (kind != "chip" && kind != "system")
          throw nb::value_error(("preset kind must be 'chip' or 'system', got '" + kind + "'").c_str());
        return preset_names(kind == "chip" ? PresetKind::Chip : PresetKind::System);
      },
      nb::arg("kind"), "Sorted names of the compiled-in chip or system presets");
  m.def(
      "preset_yaml", [](const std::string& name) { return std::string(preset_yaml(name)); }, nb::arg("name"),
      "A preset's YAML text, comments included");
}

trnsim::bindings::Register reg{20, bind};

}  // namespace
