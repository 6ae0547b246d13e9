#include "trnsim/report/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "trnsim/common/error.h"
#include "trnsim/report/hbm_timeline.h"
#include "trnsim/report/op_facts.h"
#include "trnsim/common/json_text.h"

namespace trnsim::report {
namespace {

constexpr int kChipPid = 0;
constexpr int kDmaTidBase = 16;     // tids 1..4 are the compute engines
constexpr int kLaneTidStride = 1000;  // overlap lanes of one queue: tid + lane * stride

int core_pid(int core) { return 1 + core; }
int unit_tid(isa::Engine e, int queue) {
  return e == isa::Engine::Dma ? kDmaTidBase + queue : 1 + static_cast<int>(e);
}
std::string unit_label(int core, isa::Engine e, int queue) {
  return e == isa::Engine::Dma ? fmt::format("core{} dma{}", core, queue)
                               : fmt::format("core{} {}", core, isa::engine_name(e));
}

// Exact microseconds from integer picoseconds ("12.000345"): no rounding, sub-ns precision.
std::string micros(int64_t ps) {
  const char* sign = ps < 0 ? "-" : "";
  int64_t a = ps < 0 ? -ps : ps;
  return fmt::format("{}{}.{:06d}", sign, a / 1000000, a % 1000000);
}

std::string num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "0"; }
std::string quote(const std::string& s) { return json_text(nlohmann::json(s)); }

// Buffers the text and flushes in large blocks; counts what it wrote.
class Sink {
 public:
  explicit Sink(std::ostream& o) : o_(o) {}
  ~Sink() { flush(); }
  void put(std::string_view s) {
    buf_ += s;
    if (buf_.size() > (1u << 20)) flush();
  }
  void flush() {
    o_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    total_ += buf_.size();
    buf_.clear();
  }
  uint64_t total() const { return total_ + buf_.size(); }
 private:
  std::ostream& o_;
  std::string buf_;
  uint64_t total_ = 0;
};

struct Track {
  int core, queue;
  isa::Engine engine;
  int lane;
  auto key() const { return std::tuple(core, static_cast<int>(engine), queue, lane); }
  bool operator<(const Track& o) const { return key() < o.key(); }
};

// Assigns each record a lane of its unit: the first lane free at its start. In-order engines
// always get lane 0.
std::vector<int> assign_lanes(const core::RunResult& r) {
  std::vector<size_t> order(r.records.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return r.records[a].start_ps < r.records[b].start_ps;
  });
  std::map<std::tuple<int, int, int>, std::vector<int64_t>> lane_end;  // unit -> end per lane
  std::vector<int> lane(r.records.size(), 0);
  for (size_t i : order) {
    const auto& rec = r.records[i];
    auto& ends = lane_end[{rec.core, static_cast<int>(rec.engine), rec.queue}];
    size_t l = 0;
    while (l < ends.size() && ends[l] > rec.start_ps) ++l;
    if (l == ends.size()) ends.push_back(0);
    ends[l] = rec.end_ps;
    lane[i] = static_cast<int>(l);
  }
  return lane;
}

void metadata(Sink& s, bool& first, int pid, int tid, std::string_view what, const std::string& value) {
  s.put(fmt::format("{}\n{{\"ph\":\"M\",\"ts\":0,\"pid\":{},\"tid\":{},\"name\":\"{}\",\"args\":{{\"name\":{}}}}}",
                    first ? "" : ",", pid, tid, what, quote(value)));
  first = false;
}
void sort_index(Sink& s, int pid, int tid, std::string_view what, int index) {
  s.put(fmt::format(",\n{{\"ph\":\"M\",\"ts\":0,\"pid\":{},\"tid\":{},\"name\":\"{}\",\"args\":{{\"sort_index\":{}}}}}",
                    pid, tid, what, index));
}

}  // namespace

TraceStats write_trace(std::ostream& out, const isa::Program& program, const core::RunResult& r,
                       const hw::ChipSpec& chip, const TraceOptions& opt) {
  Sink s(out);
  TraceStats st;
  s.put(fmt::format(
      "{{\"displayTimeUnit\":\"ns\",\n\"otherData\":{{\"generator\":\"trnsim {}\",\"program\":{},"
      "\"chip\":{},\"total_time_s\":{},\"total_time_ns\":{},\"event_count\":{},\"instructions\":{}}},\n"
      "\"traceEvents\":[",
      TRNSIM_VERSION, quote(program.name), quote(chip.name), num(r.total.ns() * 1e-9), num(r.total.ns()),
      r.records.size(), r.instructions));

  // Tracks: every compute engine and DMA queue of every core that has instructions, plus the
  // extra lanes overlapping records need.
  const std::vector<int> lane = assign_lanes(r);
  std::vector<Track> tracks;
  for (size_t c = 0; c < program.cores.size(); ++c) {
    const auto& cp = program.cores[c];
    if (cp.instruction_count() == 0) continue;
    for (int e = 0; e < isa::kComputeEngines; ++e) tracks.push_back({int(c), 0, static_cast<isa::Engine>(e), 0});
    for (size_t q = 0; q < cp.dma_queues.size(); ++q) tracks.push_back({int(c), int(q), isa::Engine::Dma, 0});
  }
  for (size_t i = 0; i < r.records.size(); ++i)
    if (lane[i] > 0) tracks.push_back({r.records[i].core, r.records[i].queue, r.records[i].engine, lane[i]});
  std::sort(tracks.begin(), tracks.end());
  tracks.erase(std::unique(tracks.begin(), tracks.end(),
                           [](const Track& a, const Track& b) { return a.key() == b.key(); }),
               tracks.end());

  bool first = true;
  metadata(s, first, kChipPid, 0, "process_name", fmt::format("{} chip", chip.name));
  sort_index(s, kChipPid, 0, "process_sort_index", 0);
  int last_core = -1;
  for (const auto& t : tracks) {
    int pid = core_pid(t.core);
    if (t.core != last_core) {
      metadata(s, first, pid, 0, "process_name", fmt::format("core{}", t.core));
      sort_index(s, pid, 0, "process_sort_index", pid);
      last_core = t.core;
    }
    int tid = unit_tid(t.engine, t.queue) + t.lane * kLaneTidStride;
    std::string label = unit_label(t.core, t.engine, t.queue);
    if (t.lane > 0) label += fmt::format(" +{}", t.lane);
    metadata(s, first, pid, tid, "thread_name", label);
    sort_index(s, pid, tid, "thread_sort_index", unit_tid(t.engine, t.queue) * 64 + t.lane);
  }

  for (size_t i = 0; i < r.records.size(); ++i) {
    const auto& rec = r.records[i];
    const isa::Instruction& ins = core::RunResult::instruction(program, rec);
    auto dt = op_dtype(ins.op);
    std::string name = isa::op_name(ins.op);
    std::string engine(isa::engine_name(rec.engine));
    std::string args = fmt::format(
        "\"opcode\":{},\"engine\":{},\"index\":{},\"timestamp_ns\":{},\"duration_ns\":{},"
        "\"dtype\":{},\"bytes\":{},\"flops\":{},\"hbm_bytes\":{}",
        quote(name), quote(engine), rec.index, num(rec.start_ps * 1e-3), num((rec.end_ps - rec.start_ps) * 1e-3),
        dt ? quote(std::string(numerics::name(*dt))) : "null", isa::op_bytes(ins.op), num(isa::op_flops(ins.op)),
        num(op_hbm_bytes(ins.op)));
    if (opt.operands) args += fmt::format(",\"operands\":{}", quote(isa::describe(ins)));
    s.put(fmt::format(",\n{{\"ph\":\"X\",\"name\":{},\"cat\":{},\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{{}}}}}",
                      quote(name), quote(engine), core_pid(rec.core),
                      unit_tid(rec.engine, rec.queue) + lane[i] * kLaneTidStride, micros(rec.start_ps),
                      micros(rec.end_ps - rec.start_ps), args));
    ++st.events;
  }

  for (const auto& b : hbm_bandwidth_timeline(program, r, opt.bandwidth_bins)) {
    s.put(fmt::format(",\n{{\"ph\":\"C\",\"name\":\"HBM bandwidth (GB/s)\",\"pid\":{},\"tid\":0,\"ts\":{},"
                      "\"args\":{{\"GB/s\":{}}}}}",
                      kChipPid, micros(b.start_ps), num(b.gbps)));
  }
  if (opt.bandwidth_bins > 0 && r.total.ps() > 0 && !r.records.empty()) {  // close the last bin
    s.put(fmt::format(",\n{{\"ph\":\"C\",\"name\":\"HBM bandwidth (GB/s)\",\"pid\":{},\"tid\":0,\"ts\":{},"
                      "\"args\":{{\"GB/s\":0}}}}",
                      kChipPid, micros(r.total.ps())));
  }
  // The chip's power: static plus the dynamic energy of each timeline bin (core::EnergyReport).
  const auto power = r.power_samples();
  for (const auto& [t, w] : power)
    s.put(fmt::format(",\n{{\"ph\":\"C\",\"name\":\"power (W)\",\"pid\":{},\"tid\":0,\"ts\":{},\"args\":{{\"W\":{}}}}}",
                      kChipPid, micros(t.ps()), num(w)));
  if (!power.empty())
    s.put(fmt::format(",\n{{\"ph\":\"C\",\"name\":\"power (W)\",\"pid\":{},\"tid\":0,\"ts\":{},\"args\":{{\"W\":0}}}}",
                      kChipPid, micros(r.total.ps())));
  s.put("\n]}\n");
  s.flush();
  st.bytes = s.total();
  return st;
}

TraceStats write_trace_file(const std::string& path, const isa::Program& program, const core::RunResult& r,
                            const hw::ChipSpec& chip, const TraceOptions& opt) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw Error(fmt::format("cannot create the directory '{}' for the trace: {}", parent.string(), ec.message()));
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot write the trace file '{}': {}", path, std::strerror(errno)));
  TraceStats st = write_trace(f, program, r, chip, opt);
  f.close();
  if (!f) throw Error(fmt::format("writing the trace file '{}' failed (disk full?)", path));
  return st;
}

}  // namespace trnsim::report
