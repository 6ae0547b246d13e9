#include "trnsim/workloads/traffic_trace.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "trnsim/common/error.h"
#include "trnsim/common/file_read.h"
#include "trnsim/common/limits.h"
#include "trnsim/workloads/traffic_arrivals.h"

namespace trnsim::workloads {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
    while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
    out.push_back(cell);
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

// Days from 1970-01-01 of a civil date (Howard Hinnant's algorithm): no time zone involved.
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fffffff]", each field read with from_chars (sscanf's %d overflow is
// undefined behaviour, and its %lf took "nan" seconds, which passed every later check).
bool parse_civil(const std::string& s, double& out) {
  const char* p = s.data();
  const char* end = p + s.size();
  int v[5];
  const char seps[5] = {'-', '-', ' ', ':', ':'};
  for (int k = 0; k < 5; ++k) {
    auto r = std::from_chars(p, end, v[k]);
    if (r.ec != std::errc() || r.ptr == end || *r.ptr != seps[k]) return false;
    p = r.ptr + 1;
  }
  double sec = 0;
  auto r = std::from_chars(p, end, sec, std::chars_format::fixed);
  if (r.ec != std::errc() || r.ptr != end || !(sec >= 0 && sec < 61)) return false;
  const auto [y, mo, d, h, mi] = v;
  if (y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59) return false;
  out = static_cast<double>(days_from_civil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
  return true;
}

// A civil timestamp or plain seconds (finite, at most kMaxAbsSeconds in magnitude).
constexpr double kMaxAbsSeconds = 1e12;
bool parse_timestamp(const std::string& s, double& out) {
  if (parse_civil(s, out)) return true;
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, out);
  return r.ec == std::errc() && r.ptr == end && std::isfinite(out) && std::fabs(out) <= kMaxAbsSeconds;
}

int32_t parse_length(const std::string& s, const std::string& where) {
  int64_t v = 0;
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end) throw ConfigError(fmt::format("{}: '{}' is not an integer", where, s));
  if (v < 0) throw ConfigError(fmt::format("{}: {} is negative; token counts must be >= 0", where, v));
  if (v > (int64_t{1} << 30)) throw ConfigError(fmt::format("{}: {} tokens is implausibly large", where, v));
  return static_cast<int32_t>(v);
}

}  // namespace

std::vector<TraceRow> read_azure_trace(const std::string& path) {
  // Read whole and bounded: /dev/zero has no newline and a FIFO no end.
  return parse_azure_trace(read_file_bounded<ConfigError>(path, memory_limit_bytes() / 4,
                                                          "a trace is read whole; a quarter of TRNSIM_MAX_MEMORY"),
                           path);
}

std::vector<TraceRow> parse_azure_trace(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw ConfigError(fmt::format("trace {}: empty file, expected a CSV header", path));
  const auto header = split_csv(line);
  int col[3] = {-1, -1, -1};
  const char* names[3] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
  for (int k = 0; k < 3; ++k)
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == names[k]) col[k] = static_cast<int>(i);
  for (int k = 0; k < 3; ++k)
    if (col[k] < 0)
      throw ConfigError(fmt::format("trace {}: row 1 (header) has no column '{}'; expected TIMESTAMP,ContextTokens,"
                                    "GeneratedTokens (Azure LLM inference trace format)", path, names[k]));
  const size_t need = static_cast<size_t>(std::max({col[0], col[1], col[2]})) + 1;
  std::vector<TraceRow> rows;
  double first = 0, prev = 0;
  for (int64_t row = 2; std::getline(in, line); ++row) {
    if (line.empty() || line == "\r") continue;
    const auto cells = split_csv(line);
    if (cells.size() < need)
      throw ConfigError(fmt::format("trace {}: row {} has {} columns, expected at least {}", path, row, cells.size(), need));
    double t;
    if (!parse_timestamp(cells[col[0]], t))
      throw ConfigError(fmt::format("trace {}: row {}, TIMESTAMP '{}' is not 'YYYY-MM-DD HH:MM:SS.f' or seconds", path,
                                    row, cells[col[0]]));
    if (rows.empty()) first = prev = t;
    if (t < prev)
      throw ConfigError(fmt::format("trace {}: row {}, TIMESTAMP {} is earlier than the row before; rows must be "
                                    "sorted by time", path, row, cells[col[0]]));
    prev = t;
    if (t - first > kMaxTrafficSpanS)
      throw ConfigError(fmt::format("trace {}: row {}, TIMESTAMP {} is {:.0f} s after the first row; a trace spans at "
                                    "most {:.0f} s (30 days)", path, row, cells[col[0]], t - first, kMaxTrafficSpanS));
    TraceRow r;
    r.time_s = t - first;
    r.input = parse_length(cells[col[1]], fmt::format("trace {}: row {}, ContextTokens", path, row));
    r.output = parse_length(cells[col[2]], fmt::format("trace {}: row {}, GeneratedTokens", path, row));
    rows.push_back(r);
  }
  if (rows.empty()) throw ConfigError(fmt::format("trace {}: no rows after the header", path));
  return rows;
}

}  // namespace trnsim::workloads
