// Quantity parsing: every unit family, bits vs bytes, and each way a value can be malformed.
#include "trnsim/hw/quantity.h"

#include <gtest/gtest.h>

#include <string>

#include "trnsim/common/error.h"

namespace trnsim::hw {
namespace {

// The message of the ConfigError `parse` throws, or "" if it throws none.
template <class F> std::string error_of(F parse) {
  try {
    parse();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Quantity, CapacityDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(parse_bytes("96 GiB").value(), 96.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_bytes("24 MiB").value(), 24.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_bytes("2 KiB").value(), 2048);
  EXPECT_DOUBLE_EQ(parse_bytes("1 TiB").value(), 1024.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_bytes("80 GB").value(), 80e9);
  EXPECT_DOUBLE_EQ(parse_bytes("64 KB").value(), 64e3);
  EXPECT_DOUBLE_EQ(parse_bytes("3 MB").value(), 3e6);
  EXPECT_DOUBLE_EQ(parse_bytes("2 TB").value(), 2e12);
  EXPECT_DOUBLE_EQ(parse_bytes("512 B").value(), 512);
  EXPECT_DOUBLE_EQ(parse_bytes("16KiB").value(), 16384);  // the space is optional
}

TEST(Quantity, BandwidthBytesAndBits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("2.9 TB/s").value(), 2900);  // canonical GB/s
  EXPECT_DOUBLE_EQ(parse_bandwidth("1280 GB/s").value(), 1280);
  EXPECT_DOUBLE_EQ(parse_bandwidth("820 GiB/s").value(), 820 * 1.073741824);
  EXPECT_DOUBLE_EQ(parse_bandwidth("500 MB/s").value(), 0.5);
  // Bits: EFA "800 Gbps" is 100 GB/s.
  EXPECT_DOUBLE_EQ(parse_bandwidth("800 Gb/s").value(), 100);
  EXPECT_DOUBLE_EQ(parse_bandwidth("3200 Gbps").value(), 400);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.6 Tb/s").value(), 200);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8 Mb/s").value(), 1e-3);
}

TEST(Quantity, FrequencyTimePowerComputePrice) {
  EXPECT_DOUBLE_EQ(parse_frequency("2.4 GHz").value(), 2.4);
  EXPECT_DOUBLE_EQ(parse_frequency("960 MHz").value(), 0.96);
  EXPECT_DOUBLE_EQ(parse_frequency("1000 kHz").value(), 1e-3);
  EXPECT_DOUBLE_EQ(parse_frequency("1e9 Hz").value(), 1);
  EXPECT_DOUBLE_EQ(parse_duration("1300 ns").value(), 1300);
  EXPECT_DOUBLE_EQ(parse_duration("1.5 us").value(), 1500);
  EXPECT_DOUBLE_EQ(parse_duration("2 ms").value(), 2e6);
  EXPECT_DOUBLE_EQ(parse_duration("1 s").value(), 1e9);
  EXPECT_DOUBLE_EQ(parse_duration("0 ns").value(), 0);  // a zero latency is allowed
  EXPECT_DOUBLE_EQ(parse_power("500 W").value(), 500);
  EXPECT_DOUBLE_EQ(parse_power("1.4 kW").value(), 1400);
  EXPECT_DOUBLE_EQ(parse_compute("667 TFLOPS").value(), 667);
  EXPECT_DOUBLE_EQ(parse_compute("2.5 PFLOPS").value(), 2500);
  EXPECT_DOUBLE_EQ(parse_price("21.50 USD/h").value(), 21.5);
}

TEST(Quantity, MissingUnit) {
  std::string e = error_of([] { parse_bytes("96"); });
  EXPECT_NE(e.find("expected a positive capacity with a unit"), std::string::npos) << e;
  EXPECT_NE(e.find("got '96'"), std::string::npos) << e;
  EXPECT_NE(e.find("missing unit"), std::string::npos) << e;
}

TEST(Quantity, WrongKindOfUnit) {
  std::string e = error_of([] { parse_bandwidth("96 GiB"); });
  EXPECT_NE(e.find("expected a positive bandwidth"), std::string::npos) << e;
  EXPECT_NE(e.find("GiB is a unit of capacity"), std::string::npos) << e;
  EXPECT_NE(error_of([] { parse_frequency("2.4 ns"); }).find("unit of duration"), std::string::npos);
  EXPECT_NE(error_of([] { parse_bytes("2 GB/s"); }).find("unit of bandwidth"), std::string::npos);
}

TEST(Quantity, NegativeAndZero) {
  EXPECT_NE(error_of([] { parse_bandwidth("-2.9 TB/s"); }).find("negative"), std::string::npos);
  EXPECT_NE(error_of([] { parse_bandwidth("0 GB/s"); }).find("zero"), std::string::npos);
  EXPECT_NE(error_of([] { parse_bytes("0 GiB"); }).find("zero"), std::string::npos);
  EXPECT_NE(error_of([] { parse_bytes("-1 KiB"); }).find("negative"), std::string::npos);
  EXPECT_NE(error_of([] { parse_duration("-5 ns"); }).find("negative"), std::string::npos);
}

TEST(Quantity, GarbageAndUnknownUnits) {
  EXPECT_NE(error_of([] { parse_bandwidth("fast"); }).find("no number"), std::string::npos);
  EXPECT_NE(error_of([] { parse_bandwidth(""); }).find("no number"), std::string::npos);
  EXPECT_NE(error_of([] { parse_bandwidth("inf GB/s"); }).find("no number"), std::string::npos);
  std::string e = error_of([] { parse_bandwidth("5 GB/sec"); });
  EXPECT_NE(e.find("unknown unit 'GB/sec'"), std::string::npos) << e;
  EXPECT_NE(e.find("GiB/s"), std::string::npos) << e;  // lists the accepted units
  // Units are case-sensitive: gb/s would be ambiguous between bits and bytes.
  EXPECT_NE(error_of([] { parse_bandwidth("5 gb/s"); }).find("unknown unit"), std::string::npos);
}

TEST(Quantity, ErrorsAreOneLine) {
  for (auto text : {"96", "x", "-1 GB/s", "1 GiB", "5 parsecs"}) {
    std::string e = error_of([&] { parse_bandwidth(text); });
    ASSERT_FALSE(e.empty()) << text;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    EXPECT_EQ(e.rfind("expected ", 0), 0u) << e;  // the loader prefixes file, line and field
  }
}

// Values the simulator cannot represent are refused where they are read: simulated time is
// integer picoseconds in int64, so a 1 Hz clock or a 1 B/s link overflowed it later ("an
// event was scheduled in the past", naming no field); a capacity of 0.5 B rounded to none.
TEST(Quantity, OutsideTheSimulatorsRangeIsRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {error_of([] { parse_frequency("1 Hz"); }), "1 MHz to 1000 GHz"},
      {error_of([] { parse_bandwidth("1 B/s"); }), "1 MB/s to 1 EB/s"},
      {error_of([] { parse_bytes("0.5 B"); }), "1 B to 1 EB"},
      {error_of([] { parse_duration("4000 s"); }), "0 to 1 hour"}};
  for (const auto& [e, range] : cases) {
    EXPECT_NE(e.find("expected a"), std::string::npos) << e;
    EXPECT_NE(e.find(range), std::string::npos) << e;
  }
  EXPECT_DOUBLE_EQ(parse_frequency("1 MHz").value(), 1e-3);  // the bounds themselves are taken
  EXPECT_DOUBLE_EQ(parse_bandwidth("1 MB/s").value(), 1e-3);
}

}  // namespace
}  // namespace trnsim::hw
