// Failures, checkpoints and goodput of a long training run. Failures arrive as a Poisson
// process whose rate sums every chip, node and node-network attachment of the job; the run
// writes a checkpoint every tau of work (Young/Daly's optimum by default), loses the work since
// the last one at a failure and pays a restart (reschedule, reload, re-shard). The expected wall
// time is Daly's (2006) closed form; a seeded Monte-Carlo run of the same process checks it, and
// failures can also be injected at given steps to show a timeline.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trnsim::workloads {

// Defaults derived from the Llama 3 paper (Dubey et al. 2024, section 3.3.4, table 5): 419
// unexpected interruptions in 54 days on 16,384 GPUs (2,048 hosts of 8); 58.7% GPU-related,
// 10.1% network (switch, cable, NIC), the rest host and software. No public Trainium figures.
struct FailureRates {
  double chip_mtbf_h = 86'300;   // 16,384 x 1,296 h / (0.587 x 419)
  double node_mtbf_h = 20'300;   // 2,048 x 1,296 h / (0.312 x 419): host, software, maintenance
  double link_mtbf_h = 62'700;   // 2,048 x 1,296 h / (0.101 x 419): a node's network attachment
};

struct CheckpointModel {
  double bytes = 0;                  // the whole checkpoint (weights + optimizer state)
  double write_gbps_per_node = 2.0;  // estimate: each node writes its shard to shared storage
  double read_gbps_per_node = 2.0;
  double reschedule_s = 300;         // estimate: detect, drain, replace nodes, relaunch
  double interval_s = 0;             // 0: the Young/Daly optimum
};

// Job MTBF in seconds for `chips` chips on `nodes` nodes.
double job_mtbf_s(const FailureRates& f, double chips, double nodes);
// Young's first-order sqrt(2 delta M) with Daly's higher-order correction (Daly 2006, eq. 37).
double daly_interval_s(double checkpoint_s, double mtbf_s);
// Daly's expected wall time to finish `work_s` of failure-free work.
double expected_wall_s(double work_s, double interval_s, double checkpoint_s, double restart_s, double mtbf_s);
// The same process sampled: the mean wall time over `runs` runs from `seed` (bit-reproducible).
double simulated_wall_s(double work_s, double interval_s, double checkpoint_s, double restart_s, double mtbf_s,
                        int runs, uint64_t seed);

struct TimelineEvent {
  double time_s = 0;
  std::string event;   // "checkpoint", "failure", "restart", "done"
  int64_t step = 0;    // the step the event happens at (failure: the step that was lost)
};

// Steps of `step_s` each, a checkpoint every `checkpoint_every` steps (taking checkpoint_s),
// failures during the given steps (each at most once); returns the events in time order.
std::vector<TimelineEvent> failure_timeline(int64_t steps, double step_s, int64_t checkpoint_every, double checkpoint_s,
                                            double restart_s, std::vector<int64_t> failure_steps);

struct Goodput {
  double mtbf_s = 0, checkpoint_s = 0, restart_s = 0, interval_s = 0;
  double work_s = 0, expected_s = 0, simulated_s = 0;
  double goodput = 0;        // work / expected wall time
  double lost_fraction = 0;  // 1 - goodput: checkpoints, rework and restarts
};

Goodput goodput(double work_s, double chips, double nodes, const FailureRates& f, const CheckpointModel& ck);

}  // namespace trnsim::workloads
