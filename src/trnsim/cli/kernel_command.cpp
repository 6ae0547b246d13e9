// `trnsim kernel <name>`: run one kernel of the library on a simulated chip and print its
// summary (or JSON), check its outputs against the reference, optionally write a trace.
// The shape options are the union of every kernel's parameters (kernels/registry.h); giving
// one the chosen kernel does not take is an error naming the ones it does.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "trnsim/cli/command.h"
#include "trnsim/common/error.h"
#include "trnsim/kernels/registry.h"
#include "trnsim/report/kernel_run.h"
#include "trnsim/common/json_text.h"

namespace trnsim::cli {
namespace {

struct KernelCli {
  std::string name;
  report::KernelRunOptions run;
  bool timing_only = false, functional = false, json = false, list = false;
  std::map<std::string, std::string> values;  // option storage, by parameter name
  std::map<std::string, CLI::Option*> options;
};

void print_list() {
  for (const auto& k : kernels::kernel_registry()) {
    std::string params;
    for (const auto& p : k.params) params += fmt::format(" --{}", p.name);
    std::string dtypes;
    for (auto t : k.dtypes) dtypes += fmt::format("{}{}", dtypes.empty() ? "" : "|", numerics::name(t));
    fmt::print("{:<13} {}\n{:<13} options:{}  --dtype {}\n", k.name, k.description, "", params, dtypes);
  }
}

void print_checks(const report::KernelRun& r) {
  for (const auto& c : r.checks)
    fmt::print("  check {:<8} max |err| {:.3g}, mean |err| {:.3g}, max rel {:.3g} (tolerance {:g} + {:g}|ref|): {}\n",
               c.name, c.max_abs_error, c.mean_abs_error, c.max_rel_error, c.tolerance.abs, c.tolerance.rel,
               c.ok() ? "ok" : fmt::format("{} elements OUT OF TOLERANCE", c.violations));
  if (!r.functional) fmt::print("  (timing only: no data, outputs not checked)\n");
}

int run(KernelCli& c) {
  if (c.list) {
    print_list();
    return 0;
  }
  if (c.name.empty()) throw trnsim::Error(fmt::format("name a kernel: {} (or --list)", kernels::kernel_names()));
  if (c.timing_only && c.functional) throw trnsim::Error("--timing-only and --functional exclude each other");
  c.run.kernel = c.name;
  c.run.data = c.timing_only ? report::DataMode::Timing
               : c.functional ? report::DataMode::Functional : report::DataMode::Auto;
  for (auto& [param, opt] : c.options)
    if (opt->count() > 0) c.run.params[param] = opt->get_expected_min() == 0 ? "1" : c.values[param];
  // Progress goes to stderr, so --json output stays parseable.
  c.run.progress = [](const std::string& s) { fmt::print(stderr, "trnsim: {}\n", s); };

  report::KernelRun r = report::run_kernel(c.run);
  if (c.json) {
    std::cout << json_text(r.to_json(), 2) << "\n";
  } else {
    fmt::print("{}", report::format_table(r.summary));
    if (r.power_cap_w > 0)
      fmt::print("  power cap     {:g} W: clock scale {:.4f} (voltage {:.4f}), {:.1f} W -> {:.1f} W, time {:.3f} us -> {:.3f} us{}\n",
                 r.power_cap_w, r.chip.energy.clock_scale, r.chip.energy.voltage_scale, r.throttle.at_top.power_w(),
                 r.summary.energy.average_power_w, r.throttle.at_top.time_s * 1e6, r.summary.time_s * 1e6,
                 r.throttle.met ? "" : " (CAP NOT MET at the lowest operating point)");
    print_checks(r);
    if (!r.trace_path.empty())
      fmt::print("trace written to {} ({} events, {:.1f} MiB): open it at https://ui.perfetto.dev\n", r.trace_path,
                 r.trace.events, r.trace.bytes / kMiB);
  }
  if (!r.ok()) {
    fmt::print(stderr, "trnsim: error: {} outputs differ from the reference beyond the tolerance\n", r.program.name);
    return 1;
  }
  return 0;
}

Register reg{{"kernel",
              [](CLI::App& app) -> std::function<int()> {
                auto c = std::make_shared<KernelCli>();
                app.add_option("name", c->name, "kernel: " + kernels::kernel_names());
                app.add_option("--chip", c->run.chip, "chip preset (trn1, inf2, trn2, trn3) or a YAML file")
                    ->capture_default_str();
                app.add_option("--dtype", c->run.dtype, "data type (default: the kernel's first, see --list)");
                std::set<std::string> seen;
                for (const auto& k : kernels::kernel_registry())
                  for (const auto& p : k.params) {
                    if (!seen.insert(p.name).second) continue;
                    if (p.kind == kernels::KernelParam::Kind::Flag)
                      c->options[p.name] = app.add_flag("--" + p.name, p.help);
                    else
                      c->options[p.name] = app.add_option("--" + p.name, c->values[p.name], p.help);
                  }
                app.add_flag("--timing-only", c->timing_only, "no data: timing only (large shapes)");
                app.add_flag("--functional", c->functional, "run with data and check even large shapes");
                app.add_option("--trace", c->run.trace_path, "write a Perfetto / Chrome trace JSON here");
                app.add_option("--seed", c->run.seed, "seed of the random inputs")->capture_default_str();
                app.add_flag("--json", c->json, "print the summary as JSON");
                app.add_option("--clock-scale", c->run.clock_scale,
                               "run at this fraction of the published clocks (a DVFS operating point)")->capture_default_str();
                app.add_option("--power-cap", c->run.power_cap_w,
                               "chip power cap in W: throttle the clocks until the average power fits");
                app.add_flag("--list", c->list, "list the kernels and their options");
                return [c] { return run(*c); };
              },
              "Run a library kernel on a simulated NeuronCore: summary, check, trace"}};

}  // namespace
}  // namespace trnsim::cli
