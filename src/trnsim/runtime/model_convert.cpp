#include "trnsim/runtime/model_convert.h"

#include <fmt/format.h>

#include <cmath>

#include "trnsim/common/error.h"
#include "trnsim/compiler/compiled_model_io.h"
#include "trnsim/compiler/initialiser.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/runtime/loaded_model.h"
#include "trnsim/runtime/random_inputs.h"
#include "trnsim/runtime/value_specialisation.h"

namespace trnsim::runtime {

using Values = std::map<std::string, std::vector<float>>;

namespace {

struct Run {
  compiler::CompiledModel cm;
  Values outputs;
  double time_s = 0;
};

Run compile_and_run(const compiler::Graph& g, const hw::ChipSpec& chip, const compiler::CompileOptions& opt,
                    const std::map<std::string, NpyArray>& npz, const std::string& npz_path, uint64_t seed, Values* inputs_used) {
  SpecialisedModel sm = compile_specialised(g, chip, opt, npz);
  Run r{std::move(sm.model), {}, 0};
  const Values in = npz.empty() ? random_inputs(r.cm, seed) : model_inputs(npz, r.cm, npz_path, sm.specialised);
  LoadedModel lm(r.cm, chip);
  RunOutput out = lm.run(in, core::Mode::Functional);
  r.outputs = std::move(out.outputs);
  r.time_s = out.report.time_s;
  if (inputs_used) *inputs_used = in;
  return r;
}

// Counts of what the passes changed, read from the converted IR.
nlohmann::json changes(const compiler::Graph& g) {
  int sparse = 0, dequant = 0, mx = 0, mx_weight_only = 0;
  for (const auto& n : g.nodes) {
    if (n.i("sparse_4_16", 0)) ++sparse;
    if (n.op == compiler::OpKind::MatMulMx) ++(n.s("mx_activations", "") == "none" ? mx_weight_only : mx);
    for (const auto& e : n.epilogue) dequant += e.fused_node.find("dequantize") != std::string::npos;
    dequant += n.name.find("dequantize") != std::string::npos;
  }
  return {{"sparse_matmuls", sparse}, {"dequantize_ops", dequant}, {"mx_matmuls", mx}, {"mx_weight_only_matmuls", mx_weight_only}};
}

}  // namespace

nlohmann::json accuracy(const std::vector<float>& ref, const std::vector<float>& got) {
  if (ref.size() != got.size()) throw Error("convert: outputs of different sizes");
  double dot = 0, rr = 0, gg = 0, err2 = 0, emax = 0;
  int64_t non_finite = 0;  // NaN or inf in one and not the same in the other: the sums skip them
  for (size_t i = 0; i < ref.size(); ++i) {
    const double a = ref[i], b = got[i];
    if (!std::isfinite(a) || !std::isfinite(b)) {
      if (!(a == b || (std::isnan(a) && std::isnan(b)))) ++non_finite;
      continue;
    }
    dot += a * b;
    rr += a * a;
    gg += b * b;
    err2 += (a - b) * (a - b);
    emax = std::max(emax, std::fabs(a - b));
  }
  // A NaN where the fp32 model is finite was skipped by std::max and hid behind a finite
  // max_abs_error; now it is counted, and the cosine is 0.
  const double cos = non_finite > 0 ? 0.0 : rr > 0 && gg > 0 ? dot / std::sqrt(rr * gg) : (rr == gg ? 1.0 : 0.0);
  return {{"cosine", cos}, {"max_abs_error", emax}, {"relative_l2_error", rr > 0 ? std::sqrt(err2 / rr) : std::sqrt(err2)},
          {"non_finite_mismatches", non_finite}};
}

ConvertResult convert_model(const ConvertRequest& r, const hw::ChipSpec& chip) {
  const compiler::QuantizeOptions& q = r.options.quant;
  if (q.format == compiler::QuantFormat::None && !q.sparse_4_16)
    throw ConfigError("convert: nothing to do: give --quantize FORMAT and/or --sparsity 4:16");
  compiler::check_quantize_options(q, chip, r.options.policy);
  const compiler::Graph g = compiler::import_onnx_file(r.model);
  const auto npz = r.calibrate.empty() ? std::map<std::string, NpyArray>{} : read_npz(r.calibrate);

  compiler::CompileOptions base = r.options;
  base.quant = {};
  Values inputs;
  const Run ref = compile_and_run(g, chip, base, npz, r.calibrate, r.seed, &inputs);

  compiler::CompileOptions conv = r.options;
  if (q.activations) {  // ranges of the MatMul inputs on the calibration inputs
    compiler::CompileOptions cal = base;
    cal.quant.format = q.format;
    cal.quant.calibrate = true;
    const Run c = compile_and_run(g, chip, cal, npz, r.calibrate, r.seed, nullptr);
    for (const auto& t : c.cm.outputs) {
      const auto it = c.outputs.count(t) ? c.outputs.find(t) : inputs.find(t);
      if (it == inputs.end()) continue;
      double m = 0;
      for (float x : it->second) m = std::max(m, static_cast<double>(std::fabs(x)));
      conv.quant.ranges[t] = m;
    }
    for (const auto& t : c.cm.inputs)
      if (!conv.quant.ranges.count(t) && inputs.count(t)) {
        double m = 0;
        for (float x : inputs.at(t)) m = std::max(m, static_cast<double>(std::fabs(x)));
        conv.quant.ranges[t] = m;
      }
  }
  Run out = compile_and_run(g, chip, conv, npz, r.calibrate, r.seed, nullptr);

  nlohmann::json j;
  j["kind"] = "run";
  j["model"] = r.model;
  j["output"] = r.output;
  j["chip"] = chip.name;
  j["dtype"] = std::string(compiler::policy_name(r.options.policy));
  j["quantize"] = std::string(compiler::quant_format_name(q.format));
  j["per_channel"] = q.per_channel;
  j["activations"] = q.activations;
  j["mx_activations"] = std::string(compiler::quant_format_name(q.mx_activations));
  j["sparsity"] = q.sparse_4_16 ? "4:16" : "none";
  j["warnings"] = compiler::quantize_warnings(q, chip);
  j["inputs"] = r.calibrate.empty() ? fmt::format("seeded random inputs (seed {}): no --calibrate given", r.seed) : r.calibrate;
  const int64_t w0 = compiler::constant_bytes(ref.cm.graph), w1 = compiler::constant_bytes(out.cm.graph);
  const std::string f0 = compiler::serialize_compiled(ref.cm, chip), f1 = compiler::serialize_compiled(out.cm, chip);
  j["weight_bytes"] = w1;
  j["fp32_weight_bytes"] = w0;
  j["weight_size_ratio"] = w0 > 0 ? static_cast<double>(w1) / static_cast<double>(w0) : 1.0;
  j["file_bytes"] = f1.size();
  j["fp32_file_bytes"] = f0.size();
  j["file_size_ratio"] = static_cast<double>(f1.size()) / static_cast<double>(f0.size());
  j["time_s"] = out.time_s;
  j["fp32_time_s"] = ref.time_s;
  j["time_saved_s"] = ref.time_s - out.time_s;
  j["changes"] = changes(out.cm.graph);
  double worst = 1;
  for (const auto& [name, v] : ref.outputs) {
    nlohmann::json a = accuracy(v, out.outputs.at(name));
    worst = std::min(worst, a["cosine"].get<double>());
    j["accuracy"][name] = a;
  }
  j["min_cosine"] = worst;
  if (!r.output.empty()) compiler::save_compiled(out.cm, chip, r.output);
  return {std::move(j), std::move(out.cm)};
}

std::string convert_table(const nlohmann::json& j) {
  std::string s = fmt::format("converted {} for {} (dtype {}): quantize {}{}{}, sparsity {}\n", j["model"].get<std::string>(),
                              j["chip"].get<std::string>(), j["dtype"].get<std::string>(), j["quantize"].get<std::string>(),
                              j["per_channel"].get<bool>() ? " per-channel" : "", j["activations"].get<bool>() ? " + activations"
                              : j["mx_activations"].get<std::string>() != "none" ? " + " + j["mx_activations"].get<std::string>() + " activations"
                                                                                 : " (weights only)",
                              j["sparsity"].get<std::string>());
  s += fmt::format("accuracy against the fp32 model on {}\n", j["inputs"].get<std::string>());
  s += fmt::format("  {:<28} {:>10} {:>14} {:>14}\n", "output", "cosine", "max_abs_error", "rel_l2_error");
  for (const auto& [name, a] : j["accuracy"].items()) {
    s += fmt::format("  {:<28} {:>10.6f} {:>14.6g} {:>14.6g}\n", name, a["cosine"].get<double>(), a["max_abs_error"].get<double>(),
                     a["relative_l2_error"].get<double>());
    if (const int64_t n = a.value("non_finite_mismatches", int64_t{0}); n > 0)
      s += fmt::format("  {:<28} {} values NaN or inf where the fp32 model's are not (or the reverse); the errors above skip them\n", "", n);
  }
  s += fmt::format("weights  {:>12.3f} MB (fp32 {:.3f} MB): {:.1f}% of fp32\n", j["weight_bytes"].get<int64_t>() / 1e6,
                   j["fp32_weight_bytes"].get<int64_t>() / 1e6, 100 * j["weight_size_ratio"].get<double>());
  s += fmt::format("program  {:>12.3f} MB (fp32 {:.3f} MB): {:.1f}% of fp32{}\n", j["file_bytes"].get<size_t>() / 1e6,
                   j["fp32_file_bytes"].get<size_t>() / 1e6, 100 * j["file_size_ratio"].get<double>(),
                   j["output"].get<std::string>().empty() ? "" : " -> " + j["output"].get<std::string>());
  s += fmt::format("time     {:>12.3f} us (fp32 {:.3f} us): saved {:.3f} us; {} dequantize ops, {} sparse matmuls, {} MX matmuls, "
                   "{} weight-only MX matmuls\n",
                   j["time_s"].get<double>() * 1e6, j["fp32_time_s"].get<double>() * 1e6, j["time_saved_s"].get<double>() * 1e6,
                   j["changes"]["dequantize_ops"].get<int>(), j["changes"]["sparse_matmuls"].get<int>(), j["changes"]["mx_matmuls"].get<int>(),
                   j["changes"]["mx_weight_only_matmuls"].get<int>());
  for (const auto& w : j["warnings"]) s += fmt::format("warning: {}\n", w.get<std::string>());
  return s;
}

}  // namespace trnsim::runtime
