#include "trnsim/runtime/tensor_parallel_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "trnsim/collectives/collective.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/memory_plan.h"
#include "trnsim/numerics/convert.h"
#include "trnsim/runtime/op_table_text.h"
#include "trnsim/common/json_text.h"
#include "trnsim/hw/logical_cores.h"

namespace trnsim::runtime {

using compiler::Segment;

struct TensorParallelModel::Stage {
  compiler::CompiledModel model;
  std::unique_ptr<LoadedModel> loaded;
};

namespace {

std::vector<std::string> segment_reads(const Segment& s) {
  return s.kind == Segment::Kind::Alias ? std::vector<std::string>{s.alias_of} : s.reads;
}

}  // namespace

TensorParallelModel::TensorParallelModel(compiler::Graph g, const hw::SystemSpec& system, const TpOptions& opt)
    : system_(system), opt_(opt) {
  const auto t0 = std::chrono::steady_clock::now();
  if (opt.tp < 1) throw ConfigError(fmt::format("--tp must be at least 1, got {}", opt.tp));
  const hw::ChipSpec& chip = system_.chip;
  lnc_ = hw::resolve_lnc(chip, opt.lnc);
  const int lcores = chip.neuron_cores / lnc_;
  if (opt.tp > system.chips * lcores)
    throw ConfigError(fmt::format("tensor parallelism over {} logical NeuronCores, but system {} has {} ({} chips x {} at lnc {})", opt.tp,
                                  system.name, system.chips * lcores, system.chips, lcores, lnc_));
  ranks_per_chip_ = std::min(opt.tp, lcores);
  chips_ = (opt.tp + lcores - 1) / lcores;
  if (opt.compile.cores < 0 || opt.compile.cores > chip.neuron_cores)
    throw ConfigError(fmt::format("--cores {}: {} has {} NeuronCores", opt.compile.cores, chip.name, chip.neuron_cores));
  // Only the front of the pipeline (shapes, folding, decomposition): the split needs the
  // attention's head transposes as nodes, and the shards are fused, core-split, planned and
  // lowered afterwards, as the single-chip pipeline would. The whole model is never lowered
  // (nor checked against one chip's HBM: that is what the split is for; each shard is).
  compiler::Graph ir = compiler::prepare_for_tensor_parallel(std::move(g), opt.compile);
  // The split takes the IR (and its weights: they are held once); full_ keeps the graph's
  // inputs and outputs.
  full_.chip = chip.name;
  full_.policy = opt.compile.policy;
  full_.graph.name = ir.name;
  for (const auto* names : {&ir.inputs, &ir.outputs})
    for (const auto& n : *names) full_.graph.tensors[n] = ir.tensor(n);
  full_.graph.inputs = ir.inputs, full_.graph.outputs = ir.outputs;
  full_.inputs = ir.inputs, full_.outputs = ir.outputs;
  for (const auto* names : {&ir.inputs, &ir.outputs})
    for (const auto& n : *names) full_.shapes[n] = ir.tensor(n).shape;
  compiler::ShardOptions so;
  so.ranks_to_build = opt.all_ranks ? 0 : 1;
  so.fuse = opt.compile.fuse;
  so.cores = opt.compile.cores == 0 ? lnc_ : opt.compile.cores;  // a rank's kernels: its logical core
  plan_ = compiler::shard_tensor_parallel(std::move(ir), opt.tp, so);

  // Tensors read after each compute step (by later steps, or as shard outputs): a step's model
  // outputs exactly those of its writes.
  const compiler::Graph& s0 = plan_.shards.front();
  std::vector<Segment> segs0;
  for (const auto& n : s0.nodes) segs0.push_back(compiler::lower_node(s0, n, chip, opt.compile.policy));
  const size_t nsteps = plan_.steps.size();
  std::vector<std::set<std::string>> needed_after(nsteps);
  std::set<std::string> acc(s0.outputs.begin(), s0.outputs.end());
  for (size_t k = nsteps; k-- > 0;) {
    needed_after[k] = acc;
    for (size_t i = plan_.steps[k].begin; i < plan_.steps[k].end; ++i)
      for (const auto& t : segment_reads(segs0[i])) acc.insert(t);
  }
  compiler::HbmPlan hbm = compiler::plan_hbm(s0, chip);  // a rank's shard must fit its chip

  stages_.resize(plan_.shards.size());
  for (size_t r = 0; r < plan_.shards.size(); ++r) {
    const compiler::Graph& s = plan_.shards[r];
    std::vector<Segment> segs;
    if (r == 0) segs = std::move(segs0);
    else
      for (const auto& n : s.nodes) segs.push_back(compiler::lower_node(s, n, chip, opt.compile.policy));
    for (size_t k = 0; k < nsteps; ++k) {
      auto st = std::make_unique<Stage>();
      compiler::CompiledModel& m = st->model;
      m.chip = chip.name;
      m.policy = opt.compile.policy;
      m.hbm = hbm;
      m.graph.name = fmt::format("{}.rank{}.step{}", s.name, r, k);
      std::set<std::string> produced, inputs_seen;
      for (size_t i = plan_.steps[k].begin; i < plan_.steps[k].end; ++i) {
        for (const auto& t : segment_reads(segs[i])) {
          if (s.is_const(t)) {
            m.graph.tensors.emplace(t, s.tensor(t));
          } else if (!produced.count(t) && inputs_seen.insert(t).second) {
            m.inputs.push_back(t);
            m.shapes[t] = s.tensor(t).shape;
          }
        }
        for (const auto& t : segs[i].writes) {
          produced.insert(t);
          if (needed_after[k].count(t)) {
            m.outputs.push_back(t);
            m.shapes[t] = s.tensor(t).shape;
          }
        }
        m.segments.push_back(std::move(segs[i]));
      }
      // The plan below places each kernel itself (back to back, collectives between), so the
      // stage runs its kernels strictly in order.
      st->loaded = std::make_unique<LoadedModel>(st->model, chip, /*overlap=*/false);
      stages_[r].push_back(std::move(st));
    }
  }
  if (opt.tp > 1)
    for (const auto& c : plan_.collectives) runner(c);  // an unknown algorithm fails here
  compile_time_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TensorParallelModel::~TensorParallelModel() = default;

collectives::CollectiveRunner& TensorParallelModel::runner(const compiler::TpCollective& c) {
  const int eb = compiler::activation_bytes(c.type);
  auto& slot = runners_[{static_cast<int>(c.kind), eb}];
  if (!slot) {
    collectives::CollectiveOptions co;
    co.op = c.kind == compiler::TpCollective::Kind::AllGather ? collectives::Op::AllGather : collectives::Op::AllReduce;
    co.ranks = opt_.tp;
    co.ranks_per_chip = ranks_per_chip_;  // one rank per logical core, consecutive ranks on a chip
    co.dtype = eb == 2 ? numerics::DType::BF16 : numerics::DType::F32;  // only the element size matters to the time
    co.algorithm = opt_.algorithm;
    co.launch = collectives::Launch::InProgram;  // inside the compiled model: a semaphore hop, no program launch
    slot = std::make_unique<collectives::CollectiveRunner>(system_, co);
  }
  return *slot;
}

namespace {

// What the HBM holds of an activation of this element type (fp16/bf16 in their own type).
void round_to_held(std::vector<float>& v, compiler::ElemType t) {
  if (t == compiler::ElemType::BFloat16) numerics::quantize(v, numerics::DType::BF16);
  else if (t == compiler::ElemType::Float16) numerics::quantize(v, numerics::DType::F16);
}

const char* held_name(compiler::ElemType t) {
  return t == compiler::ElemType::BFloat16 ? "bf16" : t == compiler::ElemType::Float16 ? "fp16" : "fp32";
}

}  // namespace

TpRunOutput TensorParallelModel::run(const std::map<std::string, std::vector<float>>& inputs, core::Mode mode, bool timeline) {
  const auto wall0 = std::chrono::steady_clock::now();
  const bool functional = mode == core::Mode::Functional;
  const int ranks = functional ? opt_.tp : 1;
  if (functional && static_cast<int>(stages_.size()) < opt_.tp)
    throw Error("tensor parallelism: functional mode needs every rank's shard (built with all_ranks = false)");
  TpRunOutput out;
  TpReport& r = out.report;
  r.system = system_.name;
  r.chip = system_.chip.name;
  r.mode = functional ? "functional" : "timing";
  r.dtype = std::string(compiler::policy_name(opt_.compile.policy));
  r.tp = opt_.tp;
  r.lnc = lnc_;
  r.chips = chips_;
  r.compile_time_s = compile_time_s_;
  r.column_parallel = plan_.column_parallel;
  r.row_parallel = plan_.row_parallel;
  r.vocab_parallel = plan_.vocab_parallel;
  r.notes = plan_.notes;

  // Functional: each rank's tensor values. Every rank starts from the same (replicated) inputs.
  std::vector<std::map<std::string, std::vector<float>>> env(static_cast<size_t>(ranks));
  if (functional)
    for (const auto& name : full_.inputs) {
      auto it = inputs.find(name);
      if (it == inputs.end()) throw ShapeError(fmt::format("input '{}' is missing", name));
      for (auto& e : env) e[name] = it->second;
    }
  // The two-stream timeline (rank 0 stands for all ranks).
  std::map<std::string, double> ready;  // tensor -> time its value exists (absent: at 0)
  auto ready_at = [&](const std::string& t) {
    auto it = ready.find(t);
    return it == ready.end() ? 0.0 : it->second;
  };
  double compute_free = 0, coll_free = 0;
  for (size_t k = 0; k < plan_.steps.size(); ++k) {
    const compiler::TpStep& step = plan_.steps[k];
    for (int rk = 0; rk < ranks; ++rk) {
      Stage& st = *stages_[static_cast<size_t>(rk)][k];
      std::map<std::string, std::vector<float>> in;
      if (functional)
        for (const auto& n : st.model.inputs) {
          auto it = env[static_cast<size_t>(rk)].find(n);
          if (it == env[static_cast<size_t>(rk)].end()) throw Error(fmt::format("tensor parallelism: '{}' read before it was computed", n));
          in[n] = it->second;
        }
      RunOutput ro = st.loaded->run(in, mode, timeline && rk == 0);
      if (functional)
        for (auto& [n, v] : ro.outputs) env[static_cast<size_t>(rk)][n] = std::move(v);
      if (rk != 0) continue;
      for (const auto& [unit, j] : ro.report.energy_by_unit_j)
        if (unit != "static") r.energy_by_unit_j[unit] += j * opt_.tp;
      r.peak_power_w = std::max(r.peak_power_w, ro.report.peak_power_w * opt_.tp);
      size_t op = 0;
      double stage_t = 0;  // the kernel's start within the stage's own run (kernels back to back)
      std::map<std::string, double> shift;  // kernel -> plan start - stage start
      for (const Segment& s : st.model.segments) {
        double start = compute_free;
        for (const auto& t : segment_reads(s)) start = std::max(start, ready_at(t));
        if (s.kind == Segment::Kind::Alias) {  // no kernel: the value exists when its source does
          ready[s.writes[0]] = ready_at(s.alias_of);
          continue;
        }
        const OpTime& ot = ro.report.ops.at(op++);
        r.ops.push_back({ot.node, ot.op, ot.fused, start, ot.time_s});
        shift[ot.node] = start - stage_t;
        stage_t += ot.time_s;
        compute_free = start + ot.time_s;
        r.compute_time_s += ot.time_s;
        for (const auto& t : s.writes) ready[t] = compute_free;
      }
      for (auto& e : ro.report.timeline) {
        const double d = shift.count(e.op_node) ? shift.at(e.op_node) : 0.0;
        e.start_s += d, e.end_s += d;
        r.timeline.push_back(std::move(e));
      }
    }
    if (step.collective < 0) continue;
    const compiler::TpCollective& c = plan_.collectives[static_cast<size_t>(step.collective)];
    const bool gather = c.kind == compiler::TpCollective::Kind::AllGather;
    const int eb = compiler::activation_bytes(c.type);
    const auto key = std::make_tuple(static_cast<int>(c.kind), eb, c.bytes);
    auto memo = coll_time_.find(key);
    if (memo == coll_time_.end() && opt_.tp == 1) {  // one chip: the piece is the whole, nothing to send
      memo = coll_time_.emplace(key, CollMemo{0.0, "none", {}}).first;
    } else if (memo == coll_time_.end()) {
      const collectives::CollectiveResult cr = runner(c).time(c.bytes);
      CollMemo cm{cr.time_s, cr.algorithm, cr.energy_by_unit_j};
      cm.energy_j.erase("static");  // counted once for the whole run below
      memo = coll_time_.emplace(key, std::move(cm)).first;
    }
    TpAllReduceTime t{c.result, c.node, gather ? "all-gather" : "all-reduce", held_name(c.type), c.bytes,
                      std::max(coll_free, ready_at(c.partial)), memo->second.time_s, memo->second.algorithm};
    for (const auto& [unit, j] : memo->second.energy_j) r.energy_by_unit_j[unit] += j;
    coll_free = t.start_s + t.time_s;
    ready[c.result] = coll_free;
    r.communication_time_s += t.time_s;
    (gather ? r.all_gathers : r.all_reduces).push_back(t);
    if (!functional) continue;
    // Each rank's piece as the HBM holds it (rounded to an fp16/bf16 activation's type).
    const compiler::Shape block = [&] {
      compiler::Shape b = c.shape;
      if (gather) b[static_cast<size_t>(c.axis)] /= opt_.tp;
      return b;
    }();
    std::vector<std::vector<float>> parts;
    for (auto& e : env) {
      std::vector<float> v = std::move(e.at(c.partial));
      v.resize(static_cast<size_t>(compiler::numel(block)));
      round_to_held(v, c.type);
      parts.push_back(std::move(v));
    }
    std::vector<std::vector<float>> res = opt_.tp == 1 ? std::move(parts) : runner(c).run(parts);
    if (gather) {
      // The collective concatenates the ranks' buffers; rank r's block is columns
      // [r n, (r+1) n) of `axis`, so the whole tensor interleaves them per outer index.
      const std::vector<float>& gbuf = res[0];
      const int64_t outer = compiler::numel(compiler::Shape(c.shape.begin(), c.shape.begin() + c.axis));
      const int64_t inner = compiler::numel(compiler::Shape(c.shape.begin() + c.axis + 1, c.shape.end()));
      const int64_t chunk = block[static_cast<size_t>(c.axis)], piece = outer * chunk * inner;
      std::vector<float> whole(static_cast<size_t>(compiler::numel(c.shape)));
      for (int64_t rr = 0; rr < opt_.tp; ++rr)
        for (int64_t o = 0; o < outer; ++o)
          std::copy_n(gbuf.begin() + rr * piece + o * chunk * inner, chunk * inner,
                      whole.begin() + (o * opt_.tp + rr) * chunk * inner);
      env[0][c.result] = std::move(whole);
    } else {
      for (int rk = 0; rk < ranks; ++rk) {
        round_to_held(res[static_cast<size_t>(rk)], c.type);
        env[static_cast<size_t>(rk)][c.result] = std::move(res[static_cast<size_t>(rk)]);
      }
    }
  }
  r.time_s = std::max(compute_free, coll_free);
  r.exposed_communication_time_s = std::max(0.0, r.time_s - r.compute_time_s);
  if (system_.chip.energy.modelled) {
    const auto& e = system_.chip.energy;
    r.energy_by_unit_j["static"] = e.static_power.value() * e.voltage_scale * chips_ * r.time_s;
    for (const auto& [unit, j] : r.energy_by_unit_j) r.energy_j += j;
  }
  r.communication_share = r.time_s > 0 ? r.communication_time_s / r.time_s : 0;
  r.exposed_communication_share = r.time_s > 0 ? r.exposed_communication_time_s / r.time_s : 0;
  if (functional)
    for (const auto& o : full_.outputs) {
      auto it = env[0].find(o);
      if (it == env[0].end()) throw Error(fmt::format("tensor parallelism: output '{}' was not computed", o));
      it->second.resize(static_cast<size_t>(compiler::numel(full_.shapes.at(o))));
      out.outputs[o] = std::move(it->second);
    }
  r.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return out;
}

nlohmann::json tp_report_json(const TpReport& r) {
  auto colls = [](const std::vector<TpAllReduceTime>& v) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& a : v)
      j.push_back({{"tensor", a.tensor}, {"after_node", a.node}, {"op", a.op}, {"dtype", a.dtype}, {"bytes", a.bytes},
                   {"start_s", a.start_s}, {"time_s", a.time_s}, {"algorithm", a.algorithm}});
    return j;
  };
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& o : r.ops)
    ops.push_back({{"name", o.node}, {"op", o.op}, {"fused", o.fused}, {"start_s", o.start_s}, {"time_s", o.time_s}});
  const bool e = !r.energy_by_unit_j.empty();
  return {{"kind", "run"},  // what `trnsim report` draws it as
          {"system", r.system},
          {"chip", r.chip},
          {"energy_j", e ? nlohmann::json(r.energy_j) : nlohmann::json(nullptr)},
          {"average_power_w", e && r.time_s > 0 ? nlohmann::json(r.energy_j / r.time_s) : nlohmann::json(nullptr)},
          {"peak_power_w", e ? nlohmann::json(std::max(r.peak_power_w, r.time_s > 0 ? r.energy_j / r.time_s : 0.0)) : nlohmann::json(nullptr)},
          {"energy_by_unit_j", e ? nlohmann::json(r.energy_by_unit_j) : nlohmann::json(nullptr)},
          {"mode", r.mode},
          {"dtype", r.dtype},
          {"tp", r.tp},
          {"lnc", r.lnc},
          {"chips", r.chips},
          {"time_s", r.time_s},
          {"compute_time_s", r.compute_time_s},
          {"communication_time_s", r.communication_time_s},
          {"exposed_communication_time_s", r.exposed_communication_time_s},
          {"communication_share", r.communication_share},
          {"exposed_communication_share", r.exposed_communication_share},
          {"compile_time_s", r.compile_time_s},
          {"sim_wall_s", r.sim_wall_s},
          {"all_reduces", colls(r.all_reduces)},
          {"all_gathers", colls(r.all_gathers)},
          {"ops", ops},
          {"column_parallel", r.column_parallel},
          {"row_parallel", r.row_parallel},
          {"vocab_parallel", r.vocab_parallel},
          {"notes", r.notes}};
}

std::string tp_report_table(const TpReport& r, size_t top_ops) {
  std::string s;
  s += fmt::format("system {} ({}), tensor-parallel over {} logical NeuronCores (lnc {}) on {} chips, mode {}, dtype {}\n", r.system, r.chip,
                   r.tp, r.lnc, r.chips, r.mode, r.dtype);
  s += fmt::format("latency        {:.3f} us\n", r.time_s * 1e6);
  s += fmt::format("compute        {:.3f} us (per rank, summed kernels)\n", r.compute_time_s * 1e6);
  s += fmt::format("communication  {:.3f} us in {} all-reduces and {} all-gathers, {:.3f} us exposed\n", r.communication_time_s * 1e6,
                   r.all_reduces.size(), r.all_gathers.size(), r.exposed_communication_time_s * 1e6);
  s += fmt::format("communication share {:.1f}% of the latency ({:.1f}% exposed)\n", 100 * r.communication_share,
                   100 * r.exposed_communication_share);
  s += fmt::format("split: {} column-parallel ({} vocabulary-parallel), {} row-parallel MatMuls\n", r.column_parallel.size(),
                   r.vocab_parallel.size(), r.row_parallel.size());
  for (const auto& n : r.notes) s += fmt::format("note: {}\n", n);
  s += fmt::format("all-reduces and all-gathers\n  {:<40} {:<10} {:>5} {:>12} {:>12} {:>12}  {}\n", "tensor", "op", "dtype", "bytes",
                   "start (us)", "time (us)", "algorithm");
  for (const auto* v : {&r.all_reduces, &r.all_gathers})
    for (const auto& a : *v)
      s += fmt::format("  {:<40} {:<10} {:>5} {:>12} {:>12.3f} {:>12.3f}  {}\n", (a.tensor.size() > 40 ? a.tensor.substr(a.tensor.size() - 40) : a.tensor),
                       a.op, a.dtype, a.bytes, a.start_s * 1e6, a.time_s * 1e6, a.algorithm);
  return s + op_table_text(r.ops, r.time_s, top_ops, "per-op compute on each rank");
}

void write_tp_trace(std::ostream& out, const TpReport& r) {
  // pids: rank 0's NeuronCores as write_timeline_trace numbers them; then the kernels and the
  // collectives as two processes of their own after them.
  int max_core = -1;
  for (const auto& e : r.timeline) max_core = std::max(max_core, static_cast<int>(e.unit.core));
  const int kernels_pid = max_core + 1, coll_pid = max_core + 2;
  nlohmann::json ev = nlohmann::json::array();
  auto name_process = [&](int pid, const std::string& name) {
    ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
    ev.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
  };
  for (int c = 0; c <= max_core; ++c) name_process(c, fmt::format("rank 0 NeuronCore {}", c));
  name_process(kernels_pid, "rank 0 kernels");
  name_process(coll_pid, "collectives");
  for (const auto& e : r.timeline)
    ev.push_back({{"name", e.name}, {"ph", "X"}, {"ts", e.start_s * 1e6}, {"dur", (e.end_s - e.start_s) * 1e6},
                  {"pid", e.unit.core}, {"tid", e.unit.name()}, {"args", {{"op", e.op_node}}}});
  for (const auto& o : r.ops)
    ev.push_back({{"name", o.node}, {"ph", "X"}, {"ts", o.start_s * 1e6}, {"dur", o.time_s * 1e6}, {"pid", kernels_pid},
                  {"tid", "kernels"}, {"args", {{"op", o.op}}}});
  for (const auto* v : {&r.all_reduces, &r.all_gathers})
    for (const auto& a : *v)
      ev.push_back({{"name", fmt::format("{} {}", a.op, a.tensor)}, {"ph", "X"}, {"ts", a.start_s * 1e6}, {"dur", a.time_s * 1e6},
                    {"pid", coll_pid}, {"tid", "collectives"},
                    {"args", {{"bytes", a.bytes}, {"dtype", a.dtype}, {"algorithm", a.algorithm}, {"after_node", a.node}}}});
  out << json_text(nlohmann::json{{"traceEvents", ev}, {"displayTimeUnit", "ns"}}) << "\n";
}

}  // namespace trnsim::runtime
