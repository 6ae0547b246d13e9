// A model under a closed-loop load: `in_flight` requests are kept in flight (each finished
// request is replaced at once, as Neuron's benchmark harness does), spread round-robin over the
// model copies that fit on the chip (`copy_slots`: logical cores / cores per copy). Requests on
// one copy run one after another, each taking the simulated execution time; so a copy holding
// q requests completes one every exec_s and each waits q * exec_s. docs/in-flight-load.md.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "trnsim/hw/chip_spec.h"

namespace trnsim::runtime {

struct InFlightLoad {
  int in_flight = 1;     // requests kept in flight
  int copy_slots = 1;    // model copies that run at the same time
  int busy_copies = 1;   // copies holding at least one request: min(in_flight, copy_slots)
  int max_queued = 1;    // requests on the busiest copy: ceil(in_flight / busy_copies)
  double exec_s = 0;     // one request's execution (the simulated run)
  double p50_latency_s = 0, p99_latency_s = 0, mean_latency_s = 0;
  double inferences_per_s = 0;  // samples per second over the whole chip (batch per request)
};

// The closed form above. Percentiles are nearest-rank over completions: every busy copy
// completes at the same rate, so a fraction (copies with fewer requests) / busy_copies of the
// completions wait floor(in_flight / busy) * exec_s and the rest ceil(...) * exec_s.
// ConfigError "--in-flight N: ..." for in_flight < 1, copy_slots < 1, exec_s <= 0 or batch < 1.
InFlightLoad in_flight_load(double exec_s, int64_t batch, int in_flight, int copy_slots);

// Model copies that fit on one chip when each takes `cores_per_copy` logical cores (0: all of
// them, so one copy) at that LNC (0: the chip's default).
int copy_slots(const hw::ChipSpec& chip, int cores_per_copy, int lnc);

// The `load` object of `trnsim run --json` and CompiledModel.under_load, and its report line.
nlohmann::json load_json(const InFlightLoad& l);
std::string load_text(const InFlightLoad& l);

}  // namespace trnsim::runtime
