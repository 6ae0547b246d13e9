// Replay of request traces in the Azure LLM inference format (Patel et al., Splitwise, ISCA
// 2024; data/azure-llm-inference-2023/): a CSV with a header naming TIMESTAMP, ContextTokens and
// GeneratedTokens (any order, other columns ignored); TIMESTAMP is "YYYY-MM-DD HH:MM:SS.fffffff"
// or plain seconds. Rows must be in time order with non-negative lengths; every violation is a
// ConfigError naming the file, row (1-based, the header is row 1) and field.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trnsim::workloads {

struct TraceRow {
  double time_s = 0;  // from the first row
  int32_t input = 0, output = 0;
};

std::vector<TraceRow> read_azure_trace(const std::string& path);  // bounded read, then parse
// The same from the file's text; `path` names it in errors (the fuzz target's entry).
std::vector<TraceRow> parse_azure_trace(const std::string& text, const std::string& path);

}  // namespace trnsim::workloads
