// Progress of long work (a large model's import and compile, an LLM's cold kernel timings),
// reported where the work happens and shown by the command that asked for it.
//
// The library calls progress::report(stage, done, total); without a sink installed on this
// thread it costs a null check, so tests and embedders see nothing. A command installs the
// stderr sink for its duration with progress::Scope: on a terminal one line rewritten with
// percent, rate and ETA; otherwise protocol lines `trnsim-progress: <done>/<total> <stage>`
// (read back by python/trnsim/progress.py), at most one per interval plus each stage's last;
// `--json` commands install none.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string_view>

namespace trnsim::progress {

// total < 0: unknown (a count without percent or ETA). done < 0: the end of the command
// (sent by Scope's destructor so a sink can print a throttled last state and end its line).
using Sink = std::function<void(std::string_view stage, int64_t done, int64_t total)>;

// Installs `sink` on this thread until destroyed (the previous one comes back).
class Scope {
 public:
  explicit Scope(Sink sink);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Sink sink_;
  Sink* previous_;  // scopes nest, so the outer one outlives this one
};

void report(std::string_view stage, int64_t done, int64_t total);

// The command-line sink. `tty` chooses the bar over protocol lines; `delay_s` hides work
// that finishes sooner; `interval_s` throttles protocol lines. The clock is injectable for tests.
struct SinkOptions {
  bool tty = false;
  double delay_s = 1.0;
  double interval_s = 5.0;
  std::function<double()> now_s;  // seconds; default steady_clock
};
Sink stderr_sink(std::FILE* out, SinkOptions options);

// stderr_sink on stderr, bar when stderr is a terminal; nothing when `quiet` (--json) or when
// TRNSIM_PROGRESS=0; TRNSIM_PROGRESS=1 shows short work too (no 1 s delay).
Sink command_sink(bool quiet);

}  // namespace trnsim::progress
