#include "trnsim/common/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <memory>
#include <string>

namespace trnsim::progress {
namespace {

thread_local Sink* current = nullptr;

double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string eta_text(double seconds) {
  if (seconds >= 3600) return fmt::format("{:.0f}h{:02.0f}m", seconds / 3600, std::fmod(seconds, 3600) / 60);
  if (seconds >= 60) return fmt::format("{:.0f}m{:02.0f}s", std::floor(seconds / 60), std::fmod(seconds, 60));
  return fmt::format("{:.0f}s", seconds);
}

// What the sink remembers between reports: the stage it is in and when it last printed.
struct State {
  std::string stage;
  double stage_start = 0, last_print = -1e300, last_report = 0;
  bool line_open = false;  // a bar line without its newline yet
  int64_t done = 0, total = -1;
  bool unprinted = false;  // the last report was throttled
};

void print_bar(std::FILE* out, State& s, std::string_view stage, int64_t done, int64_t total, double now) {
  const double elapsed = now - s.stage_start;
  const double rate = elapsed > 0 ? done / elapsed : 0;
  std::string text = fmt::format("\r{}: {}", stage, done);
  if (total >= 0) {
    text += fmt::format("/{} ({:.0f}%)", total, total ? 100.0 * done / total : 100.0);
    if (rate > 0 && done < total) text += fmt::format(", ETA {}", eta_text((total - done) / rate));
  }
  if (rate > 0) text += fmt::format(", {:.1f}/s", rate);
  fmt::print(out, "{:<78}", text);
  const bool last = total >= 0 && done >= total;
  if (last) fmt::print(out, "\n");
  s.line_open = !last;
  std::fflush(out);
}

}  // namespace

Scope::Scope(Sink sink) : sink_(std::move(sink)), previous_(current) { current = &sink_; }

Scope::~Scope() {
  if (sink_) sink_({}, -1, -1);  // the end: a throttled last state and an open bar line
  current = previous_;
}

void report(std::string_view stage, int64_t done, int64_t total) {
  if (current && *current) (*current)(stage, done, total);
}

Sink stderr_sink(std::FILE* out, SinkOptions o) {
  if (!o.now_s) o.now_s = steady_s;
  auto s = std::make_shared<State>();
  s->stage_start = s->last_report = o.now_s();
  const double created = s->stage_start;
  auto line = [out, o, s](std::string_view stage, int64_t done, int64_t total, double now) {
    s->last_print = now;
    s->unprinted = false;
    if (o.tty) return print_bar(out, *s, stage, done, total, now);
    fmt::print(out, "trnsim-progress: {}/{} {}\n", done, total < 0 ? std::string("?") : std::to_string(total), stage);
    std::fflush(out);
  };
  return [out, o, s, created, line](std::string_view stage, int64_t done, int64_t total) {
    const double now = o.now_s();
    const bool shown = s->last_print > -1e300;  // this stage has printed a line
    if (done < 0 || stage != s->stage) {        // the stage (or the command) ends: its last state
      if (shown && s->unprinted) line(s->stage, s->done, s->total, now);
      if (s->line_open) fmt::print(out, "\n"), std::fflush(out);
      s->line_open = false;
      if (done < 0) return;
      s->stage = std::string(stage);
      s->stage_start = s->last_report;  // its first unit of work began when the last report came
      s->last_print = -1e300;
    }
    s->done = done, s->total = total, s->unprinted = true, s->last_report = now;
    const bool last = total >= 0 && done >= total;
    if (now - created < o.delay_s) return;  // short work shows nothing
    if (last || now - s->last_print >= (o.tty ? 0.2 : o.interval_s)) line(stage, done, total, now);
  };
}

Sink command_sink(bool quiet) {
  const char* env = std::getenv("TRNSIM_PROGRESS");
  if (quiet || (env && std::string_view(env) == "0")) return {};
  SinkOptions o;
  o.tty = isatty(2) != 0;
  if (env && std::string_view(env) == "1") o.delay_s = 0;  // show even short work (tests, logs)
  return stderr_sink(stderr, o);
}

}  // namespace trnsim::progress
