// `trnsim collective`: time a collective on a simulated system over a range of sizes and print
// a table like nccom-test's (size, count, time, algbw, busbw with NCCL's conventions, and the
// algorithm used), or --json: a list of objects with unit-suffixed fields.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "trnsim/cli/command.h"
#include "trnsim/collectives/collective.h"
#include "trnsim/collectives/collective_json.h"
#include "trnsim/collectives/size_sweep.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/numerics/dtype.h"
#include "trnsim/common/json_text.h"

namespace trnsim::cli {
namespace {

struct Args {
  std::string op, system, sizes = "1K:1G", dtype = "fp32", algorithm = "auto";
  int ranks = 0, ranks_per_chip = 0, systems = 1;
  double step_factor = 2.0;
  bool json = false, in_program = false;
};

int run(const Args& a) {
  using namespace collectives;
  const hw::SystemSpec sys = hw::load_system(a.system);
  CollectiveOptions o;
  o.op = parse_op(a.op);
  o.ranks = a.ranks;
  o.ranks_per_chip = a.ranks_per_chip;
  o.systems = a.systems;
  o.dtype = numerics::dtype_from_string(a.dtype);
  o.algorithm = a.algorithm;
  o.launch = a.in_program ? Launch::InProgram : Launch::Standalone;
  const auto sizes = parse_sizes(a.sizes, a.step_factor);
  CollectiveRunner runner(sys, o);

  // Time everything first, so that an error is the only line printed.
  std::vector<CollectiveResult> results;
  for (int64_t s : sizes) results.push_back(runner.time(s));
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (auto& r : results) out.push_back(to_json(r, sys.name, a.systems, o.dtype));
    fmt::print("{}\n", json_text(out, 2));
    return 0;
  }
  fmt::print("# {} {} on {} ranks of {}{} ({}), dtype {}{}\n#   fabric: {}\n", name(o.op),
             a.algorithm == "auto" ? "(algorithm chosen per size)" : "with " + a.algorithm, runner.fabric().ranks(),
             a.systems > 1 ? fmt::format("{} x ", a.systems) : "", sys.name, sys.chip.display_name,
             numerics::name(o.dtype), a.in_program ? ", in-program (no launch)" : "", runner.fabric().describe());
  fmt::print("{:>14} {:>12} {:>6} {:>12} {:>12} {:>12}  {}\n", "size(B)", "count(elems)", "type", "time(us)",
             "algbw(GB/s)", "busbw(GB/s)", "algorithm");
  for (auto& r : results)
    fmt::print("{:>14} {:>12} {:>6} {:>12.2f} {:>12.2f} {:>12.2f}  {}\n", r.size_bytes, r.count,
               numerics::name(o.dtype), r.time_s * 1e6, r.algbw_gbps, r.busbw_gbps, r.algorithm);
  return 0;
}

Register reg{{"collective",
              [](CLI::App& sub) -> std::function<int()> {
                auto a = std::make_shared<Args>();
                sub.add_option("--op", a->op, "all-reduce, all-gather, reduce-scatter, all-to-all, permute")->required();
                sub.add_option("--system", a->system, "a system preset or a system .yaml")->required();
                sub.add_option("--ranks", a->ranks, "ranks (NeuronCores, as nccom-test counts them); default all");
                sub.add_option("--ranks-per-chip", a->ranks_per_chip, "ranks per chip; default the chip's NeuronCores");
                sub.add_option("--systems", a->systems, "copies of the system joined by EFA (UltraCluster)");
                sub.add_option("--sizes", a->sizes, "sizes in bytes: 1K:1G (a range), 64K,1M (a list); binary units");
                sub.add_option("--step-factor", a->step_factor, "multiplier between sizes of a range (default 2)");
                sub.add_option("--dtype", a->dtype, "fp32, bf16, fp16, fp8_e4m3, ...");
                sub.add_option("--algorithm", a->algorithm,
                               "auto, ring, direct, halving-doubling, hierarchical, hierarchical-hd");
                sub.add_flag("--in-program", a->in_program,
                             "a collective inside a compiled model: one semaphore hop instead of nccom-test's program launch");
                sub.add_flag("--json", a->json, "print a JSON list instead of the table");
                return [a] { return run(*a); };
              },
              "Time a collective (all-reduce, ...) on a simulated system, like nccom-test"}};

}  // namespace
}  // namespace trnsim::cli
