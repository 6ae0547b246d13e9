// The progress channel: reports reach the installed sink only, scopes nest, and the stderr
// sink's two forms (protocol lines, terminal bar) print what python/trnsim/progress.py reads.
#include "trnsim/common/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace trnsim::progress {
namespace {

// What a sink writes to a temporary FILE*, read back as a string.
struct Captured {
  std::FILE* f = std::tmpfile();
  ~Captured() { std::fclose(f); }
  std::string text() {
    std::fflush(f);
    std::rewind(f);
    std::string s;
    for (int c; (c = std::fgetc(f)) != EOF;) s.push_back(static_cast<char>(c));
    return s;
  }
};

TEST(Progress, ReportsReachOnlyTheInstalledSinkAndScopesNest) {
  std::vector<std::string> seen;
  report("nobody listens", 1, 2);  // no sink: nothing, no crash
  {
    const Scope outer([&](std::string_view s, int64_t d, int64_t) { seen.push_back("outer " + std::string(s) + std::to_string(d)); });
    report("a", 1, 2);
    {
      const Scope inner([&](std::string_view s, int64_t d, int64_t) { seen.push_back("inner " + std::string(s) + std::to_string(d)); });
      report("b", 2, 2);
    }
    report("c", 3, 4);
  }
  report("gone", 1, 1);
  const std::vector<std::string> want = {"outer a1", "inner b2", "inner -1", "outer c3", "outer -1"};
  EXPECT_EQ(seen, want);
}

TEST(Progress, ProtocolLinesAreThrottledAndEndWithTheLastState) {
  Captured c;
  double t = 0;
  {
    const Scope s(stderr_sink(c.f, {.tty = false, .delay_s = 1, .interval_s = 5, .now_s = [&] { return t; }}));
    report("lower nodes", 1, 100);  // within the delay: hidden
    for (int i = 2; i <= 99; ++i) t = i * 0.1, report("lower nodes", i, 100);  // t 0.2 .. 9.9 s
    t = 10;
    report("lower nodes", 100, 100);  // the stage's last: always shown
    t = 11;
    report("time kernel shapes", 7, -1);
    t = 11.5;
    report("time kernel shapes", 8, -1);  // throttled, then printed at the end
  }
  EXPECT_EQ(c.text(),
            "trnsim-progress: 10/100 lower nodes\n"   // first report after the 1 s delay
            "trnsim-progress: 60/100 lower nodes\n"   // 5 s later
            "trnsim-progress: 100/100 lower nodes\n"
            "trnsim-progress: 7/? time kernel shapes\n"
            "trnsim-progress: 8/? time kernel shapes\n");
}

TEST(Progress, ShortWorkPrintsNothing) {
  Captured c;
  double t = 0;
  {
    const Scope s(stderr_sink(c.f, {.tty = true, .delay_s = 1, .interval_s = 5, .now_s = [&] { return t; }}));
    for (int i = 1; i <= 10; ++i) t = i * 0.05, report("import initializers", i, 10);
  }
  EXPECT_EQ(c.text(), "");
}

TEST(Progress, TerminalBarShowsPercentRateAndEtaAndEndsItsLine) {
  Captured c;
  double t = 0;
  {
    const Scope s(stderr_sink(c.f, {.tty = true, .delay_s = 1, .interval_s = 5, .now_s = [&] { return t; }}));
    t = 2;
    report("import initializers", 50, 200);  // 25/s since the stage began at t=0
  }
  const std::string text = c.text();
  EXPECT_NE(text.find("\rimport initializers: 50/200 (25%), ETA 6s, 25.0/s"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

}  // namespace
}  // namespace trnsim::progress
