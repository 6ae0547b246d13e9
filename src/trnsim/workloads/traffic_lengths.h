// Request lengths (prompt or output tokens): fixed ("512"), uniform over a range ("128:1024",
// both ends included) or a log-normal fitted by maximum likelihood to a column of a trace
// ("fit:FILE.csv", the ContextTokens column for prompts, GeneratedTokens for outputs).
#pragma once
#include <cstdint>
#include <random>
#include <string>

namespace trnsim::workloads {

struct LengthSpec {
  std::string kind = "fixed";  // fixed | uniform | lognormal
  int64_t lo = 0, hi = 0;      // fixed: lo; uniform: [lo, hi]; lognormal: clipped to [lo, hi]
  double mu = 0, sigma = 0;    // lognormal parameters of ln(tokens)
  std::string describe() const;
};

// `which`: "input" or "output" (the column a fit reads, and the name in errors).
LengthSpec parse_length_spec(const std::string& text, const std::string& which);
int32_t draw_length(const LengthSpec& spec, std::mt19937_64& rng);

}  // namespace trnsim::workloads
