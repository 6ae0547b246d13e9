#include "trnsim/report/kernel_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "trnsim/common/error.h"
#include "trnsim/hw/energy_loader.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/numerics/convert.h"
#include "trnsim/common/limits.h"

namespace trnsim::report {
namespace {

constexpr size_t kRecordLimit = 1 << 20;

double program_matmul_flops(const isa::Program& p) {
  double f = 0;
  for (const auto& c : p.cores)
    for (const auto& ins : c.stream(isa::Engine::Tensor)) f += isa::op_flops(ins.op);
  return f;
}

int64_t program_elements(const isa::Program& p) {
  int64_t n = 0;
  for (const auto& t : p.tensors) n += t.elements();
  return n;
}

// Seeded uniform inputs (each tensor from its own stream, so adding an input does not change
// the others), or the caller's; rounded to the tensor's dtype as the simulator will.
kernels::Tensors make_inputs(const KernelRunOptions& o, const kernels::KernelDef& k, const kernels::KernelArgs& a,
                             const isa::Program& p) {
  kernels::Tensors in;
  for (const auto& [name, v] : o.inputs)
    if (p.tensor_index(name) < 0 || p.tensors[p.tensor_index(name)].kind != isa::HbmTensor::Kind::Input) {
      std::vector<std::string> names;
      for (const auto& t : p.tensors)
        if (t.kind == isa::HbmTensor::Kind::Input) names.push_back(t.name);
      throw ShapeError(fmt::format("kernel {} has no input '{}'; its inputs: {}", k.name, name, fmt::join(names, ", ")));
    }
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const auto& t = p.tensors[i];
    if (t.kind != isa::HbmTensor::Kind::Input) continue;
    std::vector<float> v;
    if (auto it = o.inputs.find(t.name); it != o.inputs.end()) {
      if (static_cast<int64_t>(it->second.size()) != t.elements())
        throw ShapeError(fmt::format("input '{}' has {} values but kernel {} takes {} ({} elements)", t.name,
                                     it->second.size(), k.name, tensor_description(t), t.elements()));
      v = it->second;
    } else {
      auto [lo, hi] = k.input_range ? k.input_range(a, t.name) : std::pair{-1.0, 1.0};
      std::mt19937_64 rng(o.seed * 1000003ULL + i);
      std::uniform_real_distribution<double> u(lo, hi);
      v.resize(static_cast<size_t>(t.elements()));
      for (auto& x : v) x = static_cast<float>(u(rng));
    }
    numerics::quantize(v, t.dtype);
    in[t.name] = std::move(v);
  }
  return in;
}

OutputCheck check_output(const std::string& name, const std::vector<float>& got, const std::vector<double>& want,
                         kernels::Tolerance tol) {
  if (got.size() != want.size())
    throw Error(fmt::format("output '{}' has {} values, the reference {}", name, got.size(), want.size()));
  OutputCheck c{name, tol};
  double sum = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - want[i]);
    if (!(err <= tol.abs + tol.rel * std::fabs(want[i]))) ++c.violations;  // NaN counts
    if (std::isnan(err)) continue;
    c.max_abs_error = std::max(c.max_abs_error, err);
    sum += err;
    if (want[i] != 0) c.max_rel_error = std::max(c.max_rel_error, err / std::fabs(want[i]));
  }
  c.mean_abs_error = got.empty() ? 0 : sum / double(got.size());
  return c;
}

void say(const KernelRunOptions& o, const std::string& s) {
  if (o.progress) o.progress(s);
}

}  // namespace

std::string tensor_description(const isa::HbmTensor& t) {
  return fmt::format("[{}] {}", fmt::join(t.shape, ", "), numerics::name(t.dtype));
}

KernelRun run_kernel(const KernelRunOptions& o) {
  KernelRun r;
  r.kernel = &kernels::find_kernel(o.kernel);
  r.args = kernels::resolve_args(*r.kernel, o.params, o.dtype);
  r.chip = hw::load_chip(o.chip);
  if (std::find(r.chip.dtypes.begin(), r.chip.dtypes.end(), r.args.dtype) == r.chip.dtypes.end())
    throw UnsupportedError(fmt::format("{} does not compute in {}", r.chip.name, numerics::name(r.args.dtype)));
  if (o.clock_scale != 1) r.chip = hw::at_clock_scale(r.chip, o.clock_scale);
  hw::check_power_cap(o.power_cap_w);
  if (o.power_cap_w > 0) {
    // Timing-only runs find the clock the cap allows; the real run below uses it.
    say(o, fmt::format("finding the clock scale that keeps {} within {} W...", r.chip.name, o.power_cap_w));
    auto measure = [&](const hw::ChipSpec& c) {
      core::RunOptions t;
      t.mode = core::Mode::Timing;
      t.record_instructions = false;
      const core::RunResult m = core::run(r.kernel->build(c, r.args), c, {}, t);
      return hw::PowerMeasure{m.total.ps() * 1e-12, m.energy.total_j};
    };
    r.power_cap_w = o.power_cap_w;
    r.throttle = hw::throttle_to_cap(r.chip, Watts(o.power_cap_w), measure);
    if (!r.throttle.met)
      say(o, fmt::format("warning: {} W is below the chip's power at its lowest operating point ({:.1f} W at clock scale {:g})",
                         o.power_cap_w, r.throttle.at_scale.power_w(), r.throttle.clock_scale));
    if (r.throttle.clock_scale != 1) r.chip = hw::at_clock_scale(r.chip, r.throttle.clock_scale);
  }
  r.program = r.kernel->build(r.chip, r.args);

  const double flops = program_matmul_flops(r.program);
  const int64_t elements = program_elements(r.program);
  r.functional = o.data == DataMode::Functional ||
                 (o.data == DataMode::Auto && elements <= kAutoMaxElements && flops <= kAutoMaxMatmulFlops);
  if (o.data == DataMode::Auto && !r.functional)
    say(o, fmt::format("{} elements / {:.3g} matmul FLOPs: timing only (force data with functional mode)", elements, flops));
  if (r.functional) {
    // Inputs, HBM copies and the double-precision reference: about 16 bytes per element.
    check_memory(16.0 * static_cast<double>(elements), fmt::format("functional run of {} ({} elements)", r.program.name, elements),
                 "--timing-only needs none of it");
    r.inputs = make_inputs(o, *r.kernel, r.args, r.program);
  }

  say(o, fmt::format("running {} on {} ({}, {} instructions)...", r.program.name, r.chip.name,
                     r.functional ? "functional" : "timing only", r.program.instruction_count()));
  const auto t0 = std::chrono::steady_clock::now();
  core::RunOptions ro;
  ro.mode = r.functional ? core::Mode::Functional : core::Mode::Timing;
  // Records cost ~32 bytes per instruction: keep them for traces and for programs small
  // enough that the summary's DMA overlap figure is worth it.
  ro.record_instructions = !o.trace_path.empty() || r.program.instruction_count() <= kRecordLimit;
  r.result = core::run(r.program, r.chip, r.inputs, ro);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  say(o, fmt::format("simulated {:.3f} us in {:.2f} s of wall time", r.result.total.us(), wall));

  r.summary = summarize(r.program, r.result, r.chip);
  if (r.functional) {
    say(o, "checking against the double-precision reference...");
    kernels::ReferenceOutputs want = r.kernel->reference(r.args, r.inputs);
    const kernels::Tolerance tol = r.kernel->tolerance(r.args);
    for (const auto& [name, values] : want) {
      auto it = r.result.outputs.find(name);
      if (it == r.result.outputs.end()) throw Error(fmt::format("the run produced no output '{}'", name));
      r.checks.push_back(check_output(name, it->second, values, tol));
    }
  }
  if (!o.trace_path.empty()) {
    r.trace = write_trace_file(o.trace_path, r.program, r.result, r.chip);
    r.trace_path = o.trace_path;
  }
  return r;
}

bool KernelRun::ok() const {
  for (const auto& c : checks)
    if (!c.ok()) return false;
  return true;
}

nlohmann::json KernelRun::to_json() const {
  nlohmann::json j = report::to_json(summary);
  j["kind"] = "kernel";
  j["clock_scale"] = chip.energy.clock_scale;
  j["voltage_scale"] = chip.energy.voltage_scale;
  if (power_cap_w > 0)
    j["power_cap"] = {{"cap_w", power_cap_w}, {"met", throttle.met}, {"clock_scale", chip.energy.clock_scale},
                      {"unthrottled_power_w", throttle.at_top.power_w()}, {"unthrottled_time_s", throttle.at_top.time_s},
                      {"searched_runs", throttle.runs}};
  j["kernel"] = kernel ? kernel->name : "";
  j["dtype"] = std::string(numerics::name(args.dtype));
  auto& a = j["args"] = nlohmann::json::object();
  for (const auto& [k, v] : args.ints) a[k] = v;
  for (const auto& [k, v] : args.choices) a[k] = v;
  j["mode"] = functional ? "functional" : "timing";
  auto& c = j["check"] = nlohmann::json::object();
  for (const auto& x : checks)
    c[x.name] = {{"max_abs_error", x.max_abs_error}, {"mean_abs_error", x.mean_abs_error},
                 {"max_rel_error", x.max_rel_error}, {"tolerance_abs", x.tolerance.abs},
                 {"tolerance_rel", x.tolerance.rel}, {"violations", x.violations}, {"ok", x.ok()}};
  j["ok"] = ok();
  j["trace"] = trace_path.empty() ? nlohmann::json(nullptr)
                                  : nlohmann::json{{"path", trace_path}, {"events", trace.events}, {"bytes", trace.bytes}};
  return j;
}

}  // namespace trnsim::report
