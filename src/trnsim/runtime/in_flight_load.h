// A model under a closed-loop load: `in_flight` requests are kept in flight (each finished
// request is replaced at once, as Neuron's benchmark harness does), spread round-robin over the
// model copies that fit on the chip (`copy_slots`: logical cores / cores per copy). Requests on
// one copy run one after another, each taking the simulated execution time; so a copy holding
// q requests completes one every exec_s and each waits q * exec_s. A request's inputs come
// over the host link before it runs and its outputs go back after (host_io_s); the runtime
// copies a queued request's inputs while another executes, so they add to its latency only
// when the core would otherwise idle (one request per copy). docs/in-flight-load.md.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "trnsim/compiler/compiled_model.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::runtime {

struct InFlightLoad {
  int in_flight = 1;     // requests kept in flight
  int copy_slots = 1;    // model copies that run at the same time
  int busy_copies = 1;   // copies holding at least one request: min(in_flight, copy_slots)
  int max_queued = 1;    // requests on the busiest copy: ceil(in_flight / busy_copies)
  double exec_s = 0;     // one request's execution (the simulated run)
  double host_io_s = 0;  // one request's inputs in and outputs out over the host link
  double p50_latency_s = 0, p99_latency_s = 0, mean_latency_s = 0;
  double inferences_per_s = 0;  // samples per second over the whole chip (batch per request)
};

// The closed form above. A copy holding q requests completes one every
// cycle(q) = max(exec_s, (exec_s + host_io_s) / q, busy * host_io_s): its core, the q requests'
// round trip, or the chip's one host link shared by the busy copies (the bounds of a closed
// queueing network: exact for equal queues; with unequal ones the copies' turns on the link
// spread the latencies, the mean within 1% of Little's law here), and each request waits q cycle(q).
// Percentiles are nearest-rank over completions: a fraction (copies with fewer requests) /
// busy_copies of them come from copies with floor(in_flight / busy) requests, each copy at its rate.
// ConfigError "--in-flight N: ..." for in_flight < 1, copy_slots < 1, exec_s <= 0, host_io_s < 0
// or batch < 1.
InFlightLoad in_flight_load(double exec_s, int64_t batch, int in_flight, int copy_slots, double host_io_s = 0);

// Seconds to copy `input_bytes` over the chip's host link into HBM and `output_bytes` back,
// one DMA transfer per tensor (`transfers`), each paying the chip's DMA fixed cost; 0 when the
// chip file has no host_link.
double host_io_seconds(const hw::ChipSpec& chip, double input_bytes, double output_bytes, int transfers);

// One request of `model`: its inputs in and outputs out at the 4 bytes per element the runtime
// holds them in HBM (compiler/memory_plan.cpp), one transfer per tensor. The one place `run
// --in-flight` and CompiledModel.under_load count a request's host bytes.
double host_io_seconds(const hw::ChipSpec& chip, const compiler::CompiledModel& model);

// Model copies that fit on one chip when each takes `cores_per_copy` logical cores (0: all of
// them, so one copy) at that LNC (0: the chip's default).
int copy_slots(const hw::ChipSpec& chip, int cores_per_copy, int lnc);

// The `load` object of `trnsim run --json` and CompiledModel.under_load, and its report line.
nlohmann::json load_json(const InFlightLoad& l);
std::string load_text(const InFlightLoad& l);

}  // namespace trnsim::runtime
