#include "trnsim/runtime/in_flight_load.h"

#include <fmt/format.h>

#include <algorithm>

#include "trnsim/common/error.h"
#include "trnsim/hw/logical_cores.h"

namespace trnsim::runtime {

InFlightLoad in_flight_load(double exec_s, int64_t batch, int in_flight, int copy_slots, double host_io_s) {
  if (in_flight < 1) throw ConfigError(fmt::format("--in-flight {}: expected a positive count of requests kept in flight", in_flight));
  if (copy_slots < 1) throw ConfigError(fmt::format("--in-flight {}: no model copy fits ({} copy slots)", in_flight, copy_slots));
  if (!(exec_s > 0)) throw ConfigError(fmt::format("--in-flight {}: the run took {} s; a load needs a positive execution time", in_flight, exec_s));
  if (!(host_io_s >= 0)) throw ConfigError(fmt::format("--in-flight {}: host transfers of {} s (expected >= 0)", in_flight, host_io_s));
  if (batch < 1) throw ConfigError(fmt::format("--in-flight {}: batch {} (expected >= 1)", in_flight, batch));
  InFlightLoad l;
  l.in_flight = in_flight;
  l.copy_slots = copy_slots;
  l.exec_s = exec_s;
  l.host_io_s = host_io_s;
  l.busy_copies = std::min(in_flight, copy_slots);
  const int lo = in_flight / l.busy_copies, extra = in_flight % l.busy_copies;  // `extra` copies hold lo + 1
  l.max_queued = lo + (extra > 0 ? 1 : 0);
  auto cycle = [&](int q) { return std::max({exec_s, (exec_s + host_io_s) / q, l.busy_copies * host_io_s}); };
  // Completions per second from the copies holding lo and lo + 1 requests.
  const double short_rate = (l.busy_copies - extra) / cycle(lo), long_rate = extra > 0 ? extra / cycle(lo + 1) : 0.0;
  const double short_share = short_rate / (short_rate + long_rate);
  auto percentile = [&](double q) { return q <= short_share ? lo * cycle(lo) : l.max_queued * cycle(l.max_queued); };
  l.p50_latency_s = percentile(0.50);
  l.p99_latency_s = percentile(0.99);
  l.mean_latency_s = static_cast<double>(in_flight) / (short_rate + long_rate);  // Little's law
  l.inferences_per_s = (short_rate + long_rate) * static_cast<double>(batch);
  return l;
}

double host_io_seconds(const hw::ChipSpec& chip, double input_bytes, double output_bytes, int transfers) {
  if (!chip.host_link) return 0;
  const double bytes_per_s = chip.host_link->value() * 1e9;
  return (input_bytes + output_bytes) / bytes_per_s + transfers * chip.core.dma.fixed_overhead.value() * 1e-9;
}

double host_io_seconds(const hw::ChipSpec& chip, const compiler::CompiledModel& model) {
  auto bytes = [&](const std::vector<std::string>& names) {
    double b = 0;
    for (const auto& n : names) b += 4.0 * static_cast<double>(compiler::numel(model.shapes.at(n)));
    return b;
  };
  return host_io_seconds(chip, bytes(model.inputs), bytes(model.outputs), static_cast<int>(model.inputs.size() + model.outputs.size()));
}

int copy_slots(const hw::ChipSpec& chip, int cores_per_copy, int lnc) {
  const int logical = hw::logical_cores(chip, lnc);
  if (cores_per_copy < 0 || cores_per_copy > logical)
    throw ConfigError(fmt::format("--cores {}: {} has {} logical NeuronCores", cores_per_copy, chip.name, logical));
  return cores_per_copy == 0 ? 1 : logical / cores_per_copy;
}

nlohmann::json load_json(const InFlightLoad& l) {
  return {{"in_flight", l.in_flight}, {"copy_slots", l.copy_slots}, {"busy_copies", l.busy_copies}, {"max_queued", l.max_queued},
          {"exec_time_s", l.exec_s}, {"host_io_s", l.host_io_s}, {"p50_latency_s", l.p50_latency_s}, {"p99_latency_s", l.p99_latency_s},
          {"mean_latency_s", l.mean_latency_s}, {"inferences_per_s", l.inferences_per_s}};
}

std::string load_text(const InFlightLoad& l) {
  return fmt::format("load         {} in flight on {} of {} model copies (up to {} queued per copy): p50 {:.3f} us, p99 {:.3f} us, "
                     "{:.1f} inferences/s (host transfers {:.1f} us a request)\n",
                     l.in_flight, l.busy_copies, l.copy_slots, l.max_queued, l.p50_latency_s * 1e6, l.p99_latency_s * 1e6,
                     l.inferences_per_s, l.host_io_s * 1e6);
}

}  // namespace trnsim::runtime
