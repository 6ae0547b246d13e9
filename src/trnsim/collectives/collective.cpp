#include "trnsim/collectives/collective.h"

#include <fmt/format.h>

#include "trnsim/collectives/algorithm_choice.h"
#include "trnsim/collectives/functional_executor.h"
#include "trnsim/collectives/i_collective_algorithm.h"
#include "trnsim/common/error.h"
#include "trnsim/numerics/dtype.h"

namespace trnsim::collectives {

CollectiveRunner::CollectiveRunner(const hw::SystemSpec& sys, const CollectiveOptions& o) : opt_(o) {
  const auto& di = numerics::info(o.dtype);
  if (di.bits % 8 != 0 || numerics::is_block_format(o.dtype) || !di.is_float)
    throw UnsupportedError(fmt::format("collectives run on whole-byte float dtypes (fp32, bf16, fp16, fp8); got {}",
                                       di.name));
  elem_bytes_ = di.bits / 8;
  static_power_w_ = sys.chip.energy.modelled ? sys.chip.energy.static_power.value() * sys.chip.energy.voltage_scale : -1;
  // (a spec built in code may leave the HBM out: then 1 PiB, still far from overflow)
  hbm_bytes_ = sys.chip.hbm.capacity.value() >= 1 ? static_cast<int64_t>(sys.chip.hbm.capacity.value()) : int64_t{1} << 50;
  const int rpc = o.ranks_per_chip > 0 ? o.ranks_per_chip : sys.chip.neuron_cores;
  costs_ = collective_costs(sys, o.dtype, rpc, o.launch);
  fabric::FabricOptions fo;
  fo.systems = o.systems;
  fo.ranks = o.ranks;
  fo.ranks_per_chip = o.ranks_per_chip;
  fo.chip_dma_bandwidth = costs_.chip_dma_bandwidth;
  if (o.ranks < 0) throw ConfigError(fmt::format("ranks must be positive, got {}", o.ranks));
  fabric_ = std::make_unique<fabric::Fabric>(sys, fo);
  if (fabric_->ranks() < 2 && o.op != Op::AllReduce && o.op != Op::Permute)
    throw ConfigError(fmt::format("{} needs at least 2 ranks", name(o.op)));
  if (!o.algorithm.empty() && o.algorithm != "auto") algorithm(o.algorithm);  // unknown names fail now
  timer_ = std::make_unique<ScheduleTimer>(*fabric_, costs_, elem_bytes_);
}

int64_t CollectiveRunner::count_for(int64_t size) const {
  const int n = fabric_->ranks();
  if (size <= 0) throw ShapeError(fmt::format("size {} B must be positive", size));
  // A rank's buffer lives in its chip's HBM; bounding it there also keeps every byte count
  // and duration below (sizes x ranks, picoseconds) far from int64 overflow.
  if (size > hbm_bytes_)
    throw ShapeError(fmt::format("size {} B is larger than one chip's HBM ({} B), where a rank's buffer lives", size, hbm_bytes_));
  if (size % elem_bytes_)
    throw ShapeError(fmt::format("size {} B is not a whole number of {} elements ({} B each)", size,
                                 numerics::name(opt_.dtype), elem_bytes_));
  const int64_t count = size / elem_bytes_;
  if (info(opt_.op).pieces_per_rank && count % n)
    throw ShapeError(fmt::format("{} of {} B = {} elements does not divide into {} equal pieces (one per rank)",
                                 name(opt_.op), size, count, n));
  return count;
}

CollectiveResult CollectiveRunner::time(int64_t size) {
  const CollectiveJob job{opt_.op, count_for(size), fabric_.get()};
  // Inside a compiled program the runtime picks the all-reduce algorithm by size class: the mesh
  // only while a rank's buffer fits one pipeline chunk (no pipelining needed), the pipelined
  // algorithms above (docs/collectives.md, In-program collectives).
  const int64_t mesh_max = opt_.launch == Launch::InProgram && opt_.op == Op::AllReduce
                               ? static_cast<int64_t>(costs_.pipeline_chunk.value())
                               : 0;
  const TimedChoice c = choose_and_time(job, *timer_, opt_.algorithm, size, mesh_max);
  CollectiveResult r;
  r.op = opt_.op;
  r.ranks = fabric_->ranks();
  r.size_bytes = size;
  r.count = job.count;
  r.time_s = c.timing.total.value() * 1e-9;
  r.algbw_gbps = static_cast<double>(size) / c.timing.total.value();
  r.busbw_gbps = r.algbw_gbps * bus_factor(opt_.op, r.ranks);
  r.algorithm = std::string(c.algorithm->name());
  r.steps = c.timing.steps;
  r.fixed_s = c.timing.fixed.value() * 1e-9;
  r.bytes_sent_per_rank = c.timing.max_bytes_sent_per_rank;
  if (static_power_w_ >= 0) {
    const fabric::LinkEnergy& e = c.timing.energy;
    const double static_j = static_power_w_ * fabric_->chips_used() * r.time_s;
    r.energy_by_unit_j = {{"HBM", e.hbm_j}, {"NeuronLink", e.neuronlink_j}, {"switch", e.switch_j},
                          {"EFA", e.scale_out_j}, {"static", static_j}};
    r.energy_j = e.total() + static_j;
  }
  return r;
}

std::vector<std::vector<float>> CollectiveRunner::run(const std::vector<std::vector<float>>& inputs) {
  const int n = fabric_->ranks();
  if (static_cast<int>(inputs.size()) != n)
    throw ShapeError(fmt::format("functional {}: {} inputs for {} ranks", name(opt_.op), inputs.size(), n));
  const size_t in = inputs[0].size();
  for (auto& v : inputs)
    if (v.size() != in) throw ShapeError(fmt::format("functional {}: inputs differ in length", name(opt_.op)));
  if (in == 0) throw ShapeError(fmt::format("functional {}: empty inputs", name(opt_.op)));
  // The working buffer holds `count` elements: the gathered output for all-gather, else the input.
  const bool gather = opt_.op == Op::AllGather;
  const int64_t count = gather ? static_cast<int64_t>(in) * n : static_cast<int64_t>(in);
  if (info(opt_.op).pieces_per_rank && count % n)
    throw ShapeError(fmt::format("functional {}: {} elements do not divide into {} pieces", name(opt_.op), count, n));
  std::vector<std::vector<float>> buf(n, std::vector<float>(count, 0.0f));
  for (int r = 0; r < n; ++r) {
    const int64_t at = gather ? piece_begin(count, n, r) : 0;
    std::copy(inputs[r].begin(), inputs[r].end(), buf[r].begin() + at);
  }
  const CollectiveJob job{opt_.op, count, fabric_.get()};
  std::string name = opt_.algorithm;
  if (name.empty() || name == "auto") name = std::string(choose_and_time(job, *timer_, "").algorithm->name());
  const ICollectiveAlgorithm& a = algorithm(name);
  if (auto why = a.why_not(job); !why.empty()) throw UnsupportedError(why);
  execute(*a.schedule(job), buf);
  if (opt_.op == Op::ReduceScatter)
    for (int r = 0; r < n; ++r)
      buf[r] = std::vector<float>(buf[r].begin() + piece_begin(count, n, r), buf[r].begin() + piece_begin(count, n, r + 1));
  return buf;
}

}  // namespace trnsim::collectives
