// Python bindings of `trnsim compare`: trnsim._core.compare. The spec goes in as JSON
// ({systems, tp (int or {system: int}), price, price_estimates, pue, kwh_usd, attainment,
// max_replicas, serve: {serve options}}), the result comes out as the JSON `trnsim compare
// --json` prints; python/trnsim/compare.py builds the one and parses the other.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <fmt/format.h>

#include "registry.h"
#include "trnsim/analysis/compare.h"
#include "trnsim/common/error.h"

namespace nb = nanobind;
using namespace trnsim;

namespace {

analysis::CompareSpec spec_from_json(const nlohmann::json& j) {
  analysis::CompareSpec s;
  for (const auto& x : j.at("systems")) s.systems.push_back(x.get<std::string>());
  const auto& tp = j.at("tp");
  if (tp.is_object()) {
    for (auto it = tp.begin(); it != tp.end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int>() < 1)
        throw ConfigError(fmt::format("tp[{}]: expected an integer >= 1, got {}", it.key(), it.value().dump()));
      s.tp_by_system[it.key()] = it.value().get<int>();
    }
  } else if (tp.is_number_integer() && tp.get<int>() >= 1) {
    s.tp = tp.get<int>();
  } else {
    throw ConfigError(fmt::format("tp: expected an integer >= 1 or {{system: tp}}, got {}", tp.dump()));
  }
  s.price = j.at("price").get<std::string>();
  for (auto it = j.at("price_estimates").begin(); it != j.at("price_estimates").end(); ++it)
    s.price_estimates[it.key()] = it.value().get<double>();
  s.pue = j.at("pue").get<double>();
  s.kwh_usd = j.at("kwh_usd").get<double>();
  s.attainment = j.at("attainment").get<double>();
  s.max_replicas = j.at("max_replicas").get<int>();
  s.serve = j.at("serve");
  return s;
}

std::string compare(const std::string& spec_json) {
  analysis::CompareSpec spec;
  try {
    spec = spec_from_json(nlohmann::json::parse(spec_json));
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(fmt::format("compare: bad argument ({})", e.what()));
  }
  nb::gil_scoped_release nogil;
  return analysis::run_compare(spec).json.dump();
}

void bind(nb::module_& root) {
  nb::module_ m = root.def_submodule("compare", "The same serving workload on several systems (trnsim compare)");
  m.def("compare", &compare, nb::arg("spec_json"), "Runs a comparison; the JSON of `trnsim compare --json`");
}

bindings::Register reg{86, bind};

}  // namespace
