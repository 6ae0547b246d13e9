// Loading chips and systems: presets and files, and each class of malformed file producing one
// line that names the file, the line, the field and what was expected.
#include "trnsim/hw/spec_loader.h"

#include <gtest/gtest.h>

#include "test_files.h"
#include "trnsim/common/error.h"
#include "trnsim/hw/preset_registry.h"

namespace trnsim::hw {
namespace {

using testing::config_error;
using testing::line_of;
using testing::preset_with;
using testing::temp_dir;
using testing::write;

// Loads trn2 with one substitution from a file and returns the error.
std::string chip_error(const std::string& from, const std::string& to, std::filesystem::path* file = nullptr) {
  auto path = write(temp_dir() / "chip.yaml", preset_with("trn2", from, to));
  if (file) *file = path;
  return config_error([&] { load_chip(path.string()); });
}

void expect_one_line(const std::string& e) { EXPECT_EQ(e.find('\n'), std::string::npos) << e; }

TEST(SpecLoader, EveryPresetLoadsUnderItsFileName) {
  for (auto& name : preset_names(PresetKind::Chip)) {
    ChipSpec c = load_chip(name);
    EXPECT_EQ(c.name, name);
    EXPECT_EQ(c.source_file, "preset:chips/" + name + ".yaml");
  }
  for (auto& name : preset_names(PresetKind::System)) {
    SystemSpec s = load_system(name);
    EXPECT_EQ(s.name, name);
    EXPECT_EQ(s.chips % s.chips_per_instance, 0);
  }
}

TEST(SpecLoader, FileWorksLikeAPreset) {
  auto dir = temp_dir();
  auto path = write(dir / "my.yaml", preset_with("trn2", "capacity: 96 GiB", "capacity: 192 GiB"));
  ChipSpec c = load_chip(path.string());
  EXPECT_EQ(c.source_file, path.string());
  EXPECT_DOUBLE_EQ(c.hbm.capacity.value(), 192 * kGiB);
  ChipSpec preset = load_chip("trn2");
  EXPECT_EQ(c.dense_tflops, preset.dense_tflops);
  EXPECT_EQ(c.core.tensor.dtype_rate, preset.core.tensor.dtype_rate);
}

TEST(SpecLoader, NamesAndPaths) {
  EXPECT_FALSE(is_path("trn2"));
  EXPECT_FALSE(is_path("trn2.48xlarge"));
  EXPECT_TRUE(is_path("my.yaml"));
  EXPECT_TRUE(is_path("my.yml"));
  EXPECT_TRUE(is_path("configs/chips/trn2"));
  std::string e = config_error([] { load_chip("trn9"); });
  EXPECT_NE(e.find("no chip preset named 'trn9'"), std::string::npos) << e;
  EXPECT_NE(e.find("trn1, trn2, trn3"), std::string::npos) << e;
  e = config_error([] { load_chip("/nonexistent/dir/chip.yaml"); });
  EXPECT_NE(e.find("/nonexistent/dir/chip.yaml: cannot read"), std::string::npos) << e;
}

TEST(SpecLoader, MissingField) {
  std::filesystem::path file;
  std::string e = chip_error("  semaphore_latency: 100 ns", "", &file);
  EXPECT_EQ(e.rfind(file.string() + ": core.semaphore_latency: missing (expected a non-negative duration", 0), 0u)
      << e;
  expect_one_line(e);
}

TEST(SpecLoader, WrongUnit) {
  std::filesystem::path file;
  std::string e = chip_error("capacity: 96 GiB", "capacity: 96 GB/s", &file);
  int line = line_of(std::string(preset_yaml("trn2")), "capacity: 96 GiB");
  EXPECT_EQ(e.rfind(file.string() + ":" + std::to_string(line) + ": hbm.capacity: expected a positive capacity", 0), 0u)
      << e;
  EXPECT_NE(e.find("got '96 GB/s'"), std::string::npos) << e;
  expect_one_line(e);
  e = chip_error("clock: 2.4 GHz", "clock: 2.4");
  EXPECT_NE(e.find("core.tensor.clock: expected a positive frequency with a unit"), std::string::npos) << e;
  EXPECT_NE(e.find("missing unit"), std::string::npos) << e;
}

TEST(SpecLoader, NegativeBandwidth) {
  std::filesystem::path file;
  std::string e = chip_error("bandwidth: 2.9 TB/s", "bandwidth: -2.9 TB/s", &file);
  int line = line_of(std::string(preset_yaml("trn2")), "bandwidth: 2.9 TB/s");
  EXPECT_EQ(e.rfind(file.string() + ":" + std::to_string(line) + ": hbm.bandwidth: expected a positive bandwidth", 0), 0u)
      << e;
  EXPECT_NE(e.find("got '-2.9 TB/s'"), std::string::npos) << e;
  expect_one_line(e);
}

TEST(SpecLoader, HostLinkIsAPositiveBandwidthOrNull) {
  std::filesystem::path file;
  std::string e = chip_error("host_link: 63 GB/s", "host_link: 0 GB/s", &file);
  int line = line_of(std::string(preset_yaml("trn2")), "host_link: 63 GB/s");
  EXPECT_EQ(e.rfind(file.string() + ":" + std::to_string(line) + ": host_link: expected a positive bandwidth", 0), 0u) << e;
  expect_one_line(e);
  EXPECT_NE(chip_error("host_link: 63 GB/s", "host_link: fast").find("got 'fast'"), std::string::npos);
  auto path = write(temp_dir() / "chip.yaml", preset_with("trn2", "host_link: 63 GB/s", "host_link: null"));
  EXPECT_FALSE(load_chip(path.string()).host_link.has_value());  // not modelled: host transfers of 0 s
  EXPECT_NEAR(load_chip("trn2").host_link->value(), 63.0, 1e-12);
}

TEST(SpecLoader, UnknownKey) {
  std::filesystem::path file;
  std::string e = chip_error("    clock: 2.4 GHz", "    clok: 2.4 GHz", &file);
  EXPECT_NE(e.find(file.string() + ":"), std::string::npos) << e;
  EXPECT_NE(e.find("core.tensor.clok: unknown key; did you mean 'clock'?"), std::string::npos) << e;
  EXPECT_NE(e.find("expected one of: rows, cols"), std::string::npos) << e;
  expect_one_line(e);
}

TEST(SpecLoader, OtherMalformedValues) {
  EXPECT_NE(chip_error("neuron_cores: 8", "neuron_cores: 8 cores").find("neuron_cores: expected a positive integer, got '8 cores'"),
            std::string::npos);
  EXPECT_NE(chip_error("neuron_cores: 8", "neuron_cores: 0").find("expected a positive integer"), std::string::npos);
  EXPECT_NE(chip_error("sparse_4_16: true", "sparse_4_16: maybe").find("core.tensor.sparse_4_16: expected true or false"),
            std::string::npos);
  EXPECT_NE(chip_error("fp32: 0.25", "fp33: 0.25").find("core.tensor.dtype_rate.fp33: expected a dtype name"),
            std::string::npos);
  EXPECT_NE(chip_error("fp32: 0.25", "fp32: -1").find("core.tensor.dtype_rate.fp32: expected a plain number > 0"),
            std::string::npos);
  // A published peak for a dtype TensorE does not run could never be reached.
  EXPECT_NE(chip_error("  fp32: 181 TFLOPS", "  mxfp4: 181 TFLOPS").find("dense_tflops.mxfp4: expected a dtype listed in core.tensor.dtype_rate"),
            std::string::npos);
  EXPECT_NE(chip_error("    clock: 2.4 GHz", "    clock: 2.4 GHz\n    clock: 2.5 GHz").find("core.tensor.clock: duplicate key"),
            std::string::npos);
  {
    std::string text(preset_yaml("trn2"));  // the whole hbm block replaced by a list
    auto start = text.find("hbm:\n"), end = text.find("\n\n", start);
    text.replace(start, end - start, "hbm: [1, 2]");
    auto path = write(temp_dir() / "chip.yaml", text);
    std::string e = config_error([&] { load_chip(path.string()); });
    EXPECT_NE(e.find(":" + std::to_string(line_of(text, "hbm: [1, 2]")) + ": hbm: expected a mapping"), std::string::npos) << e;
  }
  // Cross-field: 600 fp32 results do not fit one 2 KiB PSUM bank.
  EXPECT_NE(chip_error("max_moving_free: 512", "max_moving_free: 600").find("core.tensor.max_moving_free: expected at most 512"),
            std::string::npos);
  EXPECT_NE(chip_error("partitions_per_engine: 8", "partitions_per_engine: 4").find("core.dma.partitions_per_engine"),
            std::string::npos);
}

TEST(SpecLoader, InvalidYaml) {
  auto path = write(temp_dir() / "bad.yaml", "name: x\n  broken: [\n");
  std::string e = config_error([&] { load_chip(path.string()); });
  EXPECT_EQ(e.rfind(path.string() + ":2: invalid YAML", 0), 0u) << e;
  path = write(temp_dir() / "empty.yaml", "");
  e = config_error([&] { load_chip(path.string()); });
  EXPECT_NE(e.find("expected a mapping"), std::string::npos) << e;
}

TEST(SystemLoader, ChipPathRelativeToTheSystemFile) {
  auto dir = temp_dir();
  write(dir / "big.yaml", preset_with("trn2", "name: trn2", "name: big-trn2"));
  std::string sys = preset_with("trn2.48xlarge", "chip: trn2", "chip: big.yaml");
  auto path = write(dir / "sys.yaml", sys);
  SystemSpec s = load_system(path.string());
  EXPECT_EQ(s.chip.name, "big-trn2");
  EXPECT_EQ(s.chips, 16);
  // A preset may only name presets: there is no directory for a relative path to start from.
  std::string e = config_error([&] { parse_system(sys, "preset:systems/x.yaml", {}); });
  EXPECT_NE(e.find("chip: expected a chip preset (inf2, trn1, trn2, trn3), got 'big.yaml'"), std::string::npos) << e;
  // Errors inside the chip file name the chip file.
  write(dir / "big.yaml", preset_with("trn2", "capacity: 96 GiB", "capacity: lots"));
  e = config_error([&] { load_system(path.string()); });
  EXPECT_NE(e.find("big.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("hbm.capacity"), std::string::npos) << e;
  e = config_error([&] { load_system(write(dir / "s2.yaml", preset_with("trn2.48xlarge", "chip: trn2", "chip: none.yaml")).string()); });
  EXPECT_NE(e.find("chip: expected a chip preset"), std::string::npos) << e;
  EXPECT_NE(e.find("no such file"), std::string::npos) << e;
}

TEST(SystemLoader, TopologyAndCountsAreChecked) {
  auto dir = temp_dir();
  auto err = [&](std::string_view preset, const std::string& from, const std::string& to) {
    auto path = write(dir / "sys.yaml", preset_with(preset, from, to));
    return config_error([&] { load_system(path.string()); });
  };
  EXPECT_NE(err("trn2-ultraserver", "dims: [4, 4, 4]", "dims: [4, 4]").find("topology.dims: expected 3 dimensions whose product is chips (64)"),
            std::string::npos);
  EXPECT_NE(err("trn2.48xlarge", "dims: [4, 4]", "dims: [4, 5]").find("product is chips (16)"), std::string::npos);
  EXPECT_NE(err("trn2.48xlarge", "chips_per_instance: 16", "chips_per_instance: 5").find("chips_per_instance: expected a divisor of chips (16)"),
            std::string::npos);
  EXPECT_NE(err("trn2.48xlarge", "kind: torus2d", "kind: hypercube").find("topology.kind: expected one of torus2d"),
            std::string::npos);
  EXPECT_NE(err("trn2-ultraserver", "[512 GB/s, 512 GB/s, 256 GB/s]", "[512 GB/s, 256 GB/s]").find("topology.bandwidth_per_dim: expected one bandwidth per dimension (3)"),
            std::string::npos);
  EXPECT_NE(err("trn3-ultraserver-gen1", "kind: none", "kind: none\n  latency: 5 us").find("scale_out.latency: expected nothing for kind none"),
            std::string::npos);
  EXPECT_NE(err("trn1.32xlarge", "bandwidth_per_instance: 800 Gb/s", "bandwidth_per_instance: 0 Gb/s").find("scale_out.bandwidth_per_instance: expected a positive bandwidth"),
            std::string::npos);
  EXPECT_NE(err("trn1.32xlarge", "price: 21.50 USD/h", "price: 21.50").find("price: expected a non-negative price"),
            std::string::npos);
  EXPECT_NE(err("trn1.32xlarge", "  link_latency: 1000 ns", "").find("topology.link_latency: missing"), std::string::npos);
}

}  // namespace
}  // namespace trnsim::hw
