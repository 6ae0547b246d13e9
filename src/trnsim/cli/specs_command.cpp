// `trnsim specs`: the chip and system presets (or a user's own files) as two readable tables,
// or as JSON (--json, the same document as trnsim.specs()); --show prints a preset's YAML to copy.
#include <fmt/core.h>

#include <string>
#include <vector>

#include "trnsim/cli/command.h"
#include "trnsim/hw/gpu_spec.h"
#include "trnsim/hw/preset_registry.h"
#include "trnsim/hw/specs_report.h"
#include "trnsim/common/json_text.h"

namespace trnsim::cli {
namespace {

using hw::ChipSpec;
using hw::SystemSpec;
using numerics::DType;

// A plain text table: columns sized to their widest cell. `align` has one letter per column:
// 'l' for names and words, 'r' for numbers (so digits line up).
class Table {
 public:
  Table(std::string align, std::vector<std::string> header) : align_(std::move(align)), rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print() const {
    std::vector<size_t> width(rows_[0].size(), 0);
    for (auto& r : rows_)
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    for (size_t n = 0; n < rows_.size(); ++n) {
      std::string line;
      for (size_t i = 0; i < rows_[n].size(); ++i) {
        if (i) line += "  ";
        line += align_[i] == 'l' ? fmt::format("{:<{}}", rows_[n][i], width[i])
                                 : fmt::format("{:>{}}", rows_[n][i], width[i]);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      fmt::print("{}\n", line);
      if (n == 0) fmt::print("{}\n", std::string(line.size(), '-'));
    }
  }

 private:
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

// Three significant figures is what the sources give; whole numbers above 100.
std::string num(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

// Dense peak of one dtype; '*' marks a clock-derived figure (no published one).
std::string tflops(const ChipSpec& c, DType t) {
  if (!c.supports(t)) return "-";
  return num(c.peak_tflops(t).value()) + (c.dense_tflops.count(t) ? "" : "*");
}

std::string sparse(const ChipSpec& c) {
  auto it = c.sparse_tflops.find(DType::BF16);
  return it == c.sparse_tflops.end() ? "-" : num(it->second.value());
}

void print_chips(const std::vector<ChipSpec>& chips) {
  Table t("lrrrrrrrrrrrr", {"chip", "cores", "bf16", "fp8", "mxfp8", "mxfp4", "fp32", "sparse", "HBM GiB", "HBM GB/s",
           "link GB/s", "knee F/B", "power W"});
  for (auto& c : chips) {
    t.add({c.name, std::to_string(c.neuron_cores), tflops(c, DType::BF16), tflops(c, DType::F8E4M3),
           tflops(c, DType::MXFP8E4M3), tflops(c, DType::MXFP4), tflops(c, DType::F32), sparse(c),
           num(c.hbm.capacity.value() / kGiB), num(c.hbm.bandwidth.value()),
           num(c.link.bandwidth_per_chip.value()),
           c.supports(DType::BF16) ? num(c.roofline_knee(DType::BF16)) : "-",
           c.power ? num(c.power->value()) : "-"});
  }
  fmt::print("Chips: dense TFLOPS per chip (fp8 = fp8_e4m3; sparse = 4:16, bf16); knee = bf16 roofline "
             "knee in FLOP per HBM byte\n");
  t.print();
  bool derived = false;
  for (auto& c : chips)
    for (auto& [d, r] : c.core.tensor.dtype_rate) derived |= !c.dense_tflops.count(d);
  if (derived) fmt::print("* clock-derived (rows x cols x 2 x clock x cores x rate): no published figure\n");
}

std::string topology(const SystemSpec& s) {
  std::string out = s.topology.kind;
  for (size_t i = 0; i < s.topology.dims.size(); ++i) {
    out += i ? 'x' : ' ';
    out += std::to_string(s.topology.dims[i]);
  }
  return out;
}

std::string scale_out(const SystemSpec& s) {
  if (s.scale_out.kind == "none") return "-";
  std::string kind = s.scale_out.kind == "efa" ? "EFA" : "ENA";
  return fmt::format("{} {} Gb/s", kind, num(s.scale_out.bandwidth_per_instance.value() * 8));
}

void print_systems(const std::vector<SystemSpec>& systems) {
  Table t("llrrlrlrrr", {"system", "chip", "chips", "instances", "topology", "scale-up GB/s", "scale-out", "bf16 PFLOPS",
           "HBM GiB", "USD/h"});
  for (auto& s : systems) {
    std::string bf16 = s.chip.supports(DType::BF16) ? num(s.chip.peak_tflops(DType::BF16).value() * s.chips / 1e3) : "-";
    t.add({s.name, s.chip.name, std::to_string(s.chips), std::to_string(s.instances()), topology(s),
           s.topology.kind == "single" ? "-" : num(s.topology.bandwidth_per_chip.value()), scale_out(s), bf16,
           num(s.chip.hbm.capacity.value() * s.chips / kGiB), s.price ? fmt::format("{:.2f}", s.price->value()) : "-"});
  }
  fmt::print("Systems: scale-up bandwidth per chip; scale-out per instance; totals over all chips\n");
  t.print();
}

// GPU peers (configs/gpus): the systems of the baseline with their GPUs' figures.
void print_gpu_systems() {
  Table t("llrrrrrrr", {"GPU system", "GPU", "GPUs", "NVLink domain", "bf16 PFLOPS", "fp8 PFLOPS", "HBM GB", "TDP W",
                        "USD/h"});
  for (const auto& name : hw::preset_names(hw::PresetKind::Gpu)) {
    if (!hw::is_gpu_system(name)) continue;
    const hw::GpuSystemSpec s = hw::load_gpu_system(name);
    auto pf = [&](DType d) { return s.gpu.dense_tflops.count(d) ? num(s.gpu.dense_tflops.at(d).value() * s.gpus / 1e3) : "-"; };
    t.add({s.name, s.gpu.name, std::to_string(s.gpus), std::to_string(s.nvlink_domain), pf(DType::BF16), pf(DType::F8E4M3),
           num(s.gpu.hbm.capacity.value() * s.gpus / 1e9), num(s.gpu.power.value()),
           s.price ? fmt::format("{:.2f}", s.price->value()) : "-"});
  }
  fmt::print("GPU peers (configs/gpus): dense peaks and HBM over all GPUs; price per instance\n");
  t.print();
}

struct Options {
  std::vector<std::string> chips, systems;
  std::string show;
  bool json = false;
};

Register reg{{"specs",
              [](CLI::App& sub) -> std::function<int()> {
                auto opt = std::make_shared<Options>();
                sub.add_option("--chip", opt->chips,
                               "Only these chips: a preset name or a YAML file (repeatable)");
                sub.add_option("--system", opt->systems,
                               "Only these systems: a preset name or a YAML file (repeatable)");
                sub.add_flag("--json", opt->json, "Print {\"chips\": [...], \"systems\": [...]} as JSON");
                sub.add_option("--show", opt->show, "Print a preset's YAML (to copy and edit)");
                return [opt] {
                  if (!opt->show.empty()) {
                    fmt::print("{}", hw::preset_yaml(opt->show));
                    return 0;
                  }
                  auto sel = hw::select_specs(opt->chips, opt->systems);
                  if (opt->json) {
                    fmt::print("{}\n", json_text(hw::specs_json(sel), 2));
                    return 0;
                  }
                  if (!sel.chips.empty()) print_chips(sel.chips);
                  if (!sel.chips.empty() && !sel.systems.empty()) fmt::print("\n");
                  if (!sel.systems.empty()) print_systems(sel.systems);
                  if (opt->chips.empty() && opt->systems.empty()) {
                    fmt::print("\n");
                    print_gpu_systems();
                  }
                  return 0;
                };
              },
              "Chip and system specs: the presets, or your own YAML files"}};

}  // namespace
}  // namespace trnsim::cli
