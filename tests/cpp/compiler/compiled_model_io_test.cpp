// Saved compiled programs: a reloaded model is the same model (every field, and each kernel
// runs to the same outputs and the same simulated time), and damaged files (wrong magic,
// version, chip; truncated; corrupt) are Errors naming the file and the problem, never crashes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "onnx_model.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/compiled_model_io.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/core/run.h"
#include "trnsim/hw/spec_loader.h"

namespace trnsim::compiler {
namespace {

using testing::OnnxModel;

const hw::ChipSpec& trn2() {
  static const hw::ChipSpec chip = hw::load_chip("trn2");
  return chip;
}

// MatMul + bias + Gelu (fused), a Reshape (an alias segment), LayerNorm and Softmax: kernels
// of every engine, constants, attributes and epilogues all go through the file.
CompiledModel sample_model(DTypePolicy policy = DTypePolicy::BF16) {
  OnnxModel m;
  m.input("x", {-1, 64}).floats("w", {64, 96}, testing::values(64 * 96, 3)).floats("b", {96}, testing::values(96, 4));
  m.floats("g", {96}, testing::values(96, 5)).floats("beta", {96}, testing::values(96, 6));
  m.ints("shape", {3}, {-1, 4, 24});
  m.node("MatMul", {"x", "w"}, {"h"}, "mm");
  m.node("Add", {"h", "b"}, {"hb"}, "bias");
  m.node("Gelu", {"hb"}, {"a"}, "gelu");
  auto& ln = m.node("LayerNormalization", {"a", "g", "beta"}, {"n"}, "ln");
  OnnxModel::attr(ln, "epsilon", 1e-5f);
  m.node("Reshape", {"n", "shape"}, {"r"}, "reshape");
  auto& sm = m.node("Softmax", {"r"}, {"y"}, "softmax");
  OnnxModel::attr(sm, "axis", int64_t{-1});
  m.output("y");
  CompileOptions o;
  o.batch = 8;
  o.policy = policy;
  o.keep_ir = true;
  return compile(import_onnx_bytes(m.bytes()), trn2(), o);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("trnsim_io_test_" + name)).string();
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The message of the Error that loading `bytes` throws ("" if it loads).
std::string load_error(const std::string& bytes, const hw::ChipSpec& chip = trn2()) {
  try {
    deserialize_compiled(bytes, "model.tpg", chip);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

uint64_t fnv1a(std::string_view s) {  // as the format's payload hash (independent copy)
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) { h ^= c; h *= 1099511628211ull; }
  return h;
}

// Offset of the payload: magic 8, version 4, chip name (8 + n), chip hash 8, size 8, hash 8.
size_t payload_offset(const std::string& bytes) {
  uint64_t n;
  std::memcpy(&n, bytes.data() + 12, 8);
  return 12 + 8 + n + 8 + 8 + 8;
}

TEST(CompiledModelIo, RoundTripKeepsEveryFieldAndRunsIdentically) {
  const CompiledModel cm = sample_model();
  const std::string path = temp_path("roundtrip.tpg");
  save_compiled(cm, trn2(), path);
  ASSERT_TRUE(is_compiled_file(path));
  const CompiledHeader h = read_compiled_header(path);
  EXPECT_EQ(h.chip, "trn2");
  EXPECT_EQ(h.version, kCompiledFormatVersion);
  EXPECT_EQ(h.chip_hash, chip_spec_hash(trn2()));
  const CompiledModel back = load_compiled(path, trn2());
  std::filesystem::remove(path);

  EXPECT_EQ(back.chip, cm.chip);
  EXPECT_EQ(back.policy, cm.policy);
  EXPECT_EQ(back.compile_time_s, cm.compile_time_s);
  EXPECT_EQ(back.inputs, cm.inputs);
  EXPECT_EQ(back.outputs, cm.outputs);
  EXPECT_EQ(back.shapes, cm.shapes);
  EXPECT_EQ(back.hbm.weight_bytes, cm.hbm.weight_bytes);
  EXPECT_EQ(back.hbm.peak_activation_bytes, cm.hbm.peak_activation_bytes);
  EXPECT_EQ(back.dump_ir(), cm.dump_ir());   // pass names, times and IR after each
  EXPECT_EQ(dump(back.graph), dump(cm.graph));
  for (const auto& [name, t] : cm.graph.tensors) {
    ASSERT_TRUE(back.graph.tensors.count(name)) << name;
    EXPECT_EQ(back.graph.tensor(name).data, t.data) << name;  // constants bit for bit
  }
  ASSERT_EQ(back.segments.size(), cm.segments.size());
  bool saw_alias = false;
  for (size_t i = 0; i < cm.segments.size(); ++i) {
    const Segment& a = cm.segments[i];
    const Segment& b = back.segments[i];
    EXPECT_EQ(b.kind, a.kind);
    EXPECT_EQ(b.node, a.node);
    EXPECT_EQ(b.fused, a.fused);
    EXPECT_EQ(b.reads, a.reads);
    EXPECT_EQ(b.writes, a.writes);
    if (a.kind == Segment::Kind::Alias) { saw_alias = true; continue; }
    ASSERT_EQ(b.program.instruction_count(), a.program.instruction_count());
    // Each kernel on the simulator: same outputs bit for bit, same simulated time.
    std::map<std::string, std::vector<float>> in;
    uint32_t seed = 10;
    for (const auto& t : a.program.tensors)
      if (t.kind == isa::HbmTensor::Kind::Input) in[t.name] = testing::values(static_cast<size_t>(t.elements()), seed++);
    const core::RunResult ra = core::run(a.program, trn2(), in);
    const core::RunResult rb = core::run(b.program, trn2(), in);
    EXPECT_EQ(ra.total.ps(), rb.total.ps()) << a.node;
    EXPECT_EQ(ra.instructions, rb.instructions) << a.node;
    ASSERT_EQ(ra.outputs.size(), rb.outputs.size());
    for (const auto& [n, v] : ra.outputs) {
      const auto& w = rb.outputs.at(n);
      ASSERT_EQ(v.size(), w.size());
      EXPECT_EQ(std::memcmp(v.data(), w.data(), v.size() * sizeof(float)), 0) << a.node << " " << n;
    }
  }
  EXPECT_TRUE(saw_alias);
  EXPECT_GE(cm.segments.size(), 3u);  // MatMul (+bias, GELU, LayerNorm), Reshape, Softmax
  // The file is a function of the model: saving the reloaded model gives the same bytes.
  EXPECT_EQ(serialize_compiled(back, trn2()), serialize_compiled(cm, trn2()));
}

TEST(CompiledModelIo, WrongMagicVersionAndChipAreNamed) {
  const std::string good = serialize_compiled(sample_model(), trn2());
  ASSERT_EQ(load_error(good), "");

  std::string bad = good;
  bad[0] = 'X';
  EXPECT_NE(load_error(bad).find("model.tpg: not a trnsim compiled program"), std::string::npos) << load_error(bad);
  EXPECT_NE(load_error("an ONNX model, say").find("no TRNSIMPG magic"), std::string::npos);

  bad = good;
  const uint32_t v = kCompiledFormatVersion + 1;
  std::memcpy(bad.data() + 8, &v, 4);
  const std::string ev = load_error(bad);
  EXPECT_NE(ev.find("format version " + std::to_string(v)), std::string::npos) << ev;
  EXPECT_NE(ev.find("reads version " + std::to_string(kCompiledFormatVersion)), std::string::npos) << ev;

  // Version 5 only added instruction kinds (the MX ones): a version-4 file of the same bytes
  // still reads; one older than that is refused, naming both.
  bad = good;
  uint32_t old_version = kOldestReadableFormatVersion;
  std::memcpy(bad.data() + 8, &old_version, 4);
  EXPECT_EQ(load_error(bad), "");
  old_version = kOldestReadableFormatVersion - 1;
  std::memcpy(bad.data() + 8, &old_version, 4);
  EXPECT_NE(load_error(bad).find("format version " + std::to_string(old_version)), std::string::npos) << load_error(bad);

  const std::string ec = load_error(good, hw::load_chip("trn1"));
  EXPECT_NE(ec.find("compiled for chip 'trn2', not 'trn1'"), std::string::npos) << ec;

  hw::ChipSpec changed = trn2();  // same name, another spec: the hash tells them apart
  changed.core.dma.engines += 1;
  EXPECT_NE(chip_spec_hash(changed), chip_spec_hash(trn2()));
  const std::string eh = load_error(good, changed);
  EXPECT_NE(eh.find("different spec of chip 'trn2'"), std::string::npos) << eh;

  const std::string path = temp_path("not_a_program.onnx");
  write(path, "not a program");
  EXPECT_FALSE(is_compiled_file(path));
  EXPECT_FALSE(is_compiled_file(temp_path("does_not_exist.tpg")));
  std::filesystem::remove(path);
  try {
    load_compiled(temp_path("does_not_exist.tpg"), trn2());
    FAIL() << "loaded a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does_not_exist.tpg: cannot read"), std::string::npos) << e.what();
  }
}

TEST(CompiledModelIo, TruncatedFilesAreErrors) {
  const std::string good = serialize_compiled(sample_model(), trn2());
  const size_t payload = payload_offset(good);
  // Every cut inside the header, then cuts through the payload.
  for (size_t n = 0; n < good.size(); n += (n < payload + 16 ? 1 : good.size() / 97 + 1)) {
    const std::string e = load_error(good.substr(0, n));
    ASSERT_NE(e, "") << "cut at " << n;
    EXPECT_EQ(e.rfind("model.tpg: ", 0), 0u) << e;
    if (n > payload) EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  }
}

TEST(CompiledModelIo, CorruptBytesAreErrorsNeverCrashes) {
  const std::string good = serialize_compiled(sample_model(DTypePolicy::FP32), trn2());
  const size_t payload = payload_offset(good);
  // A flipped byte fails the payload hash.
  std::string bad = good;
  bad[payload + 100] ^= 0x5a;
  EXPECT_NE(load_error(bad).find("model.tpg: corrupt file: the payload hash does not match"), std::string::npos);
  // With the hash recomputed, each flip reaches the parser: it must load or throw Error (a
  // bounds or range check, or the program validation), nothing else.
  int errors = 0, tried = 0;
  for (size_t i = payload; i < good.size(); i += 13) {
    for (uint8_t mask : {uint8_t{0xff}, uint8_t{0x80}}) {
      bad = good;
      bad[i] ^= static_cast<char>(mask);
      const uint64_t h = fnv1a(std::string_view(bad).substr(payload));
      std::memcpy(bad.data() + payload - 8, &h, 8);
      ++tried;
      try {
        deserialize_compiled(bad, "model.tpg", trn2());
      } catch (const Error& e) {
        ++errors;
        EXPECT_EQ(std::string(e.what()).rfind("model.tpg: ", 0), 0u) << e.what();
      }
    }
  }
  EXPECT_GT(errors, tried / 20);  // many flips land in counts, enums and names
}

}  // namespace
}  // namespace trnsim::compiler

namespace trnsim::compiler {
namespace {

// With TRNSIM_WRITE_REGRESSIONS=DIR, the forged files are also written to DIR (how
// fuzz/regressions/tpg/forged-* were made).
namespace tpg {
std::string forged(const std::string& bytes, const std::string& name) {
  if (const char* dir = std::getenv("TRNSIM_WRITE_REGRESSIONS")) write(std::string(dir) + "/" + name, bytes);
  return bytes;
}

// The first DMA of the model (with its destination in HBM if `to_hbm`), to forge.
isa::Dma& first_dma(CompiledModel& m, bool to_hbm) {
  for (auto& s : m.segments)
    for (auto& core : s.program.cores)
      for (auto& q : core.dma_queues)
        for (auto& ins : q)
          if (auto* d = std::get_if<isa::Dma>(&ins.op); d && (!to_hbm || d->dst.space == isa::Space::HBM)) return *d;
  throw std::logic_error("the sample model has no such DMA");
}
}  // namespace tpg

// A forged file (its hash recomputed: FNV-1a is a checksum, not a signature) whose DMA walks
// an HBM tensor with a partition stride chosen so that the extent wraps int64: before the
// checked extent, the bounds check passed and the DMA wrote through a wild pointer.
TEST(CompiledModelIo, ForgedStrideThatWrapsTheExtentIsRefused) {
  for (const int64_t stride : {int64_t{1} << 62, (int64_t{1} << 62) / 3 + 1, -(int64_t{1} << 62), INT64_MAX}) {
    CompiledModel m = sample_model(DTypePolicy::FP32);
    isa::Dma& d = tpg::first_dma(m, true);
    d.dst.partition_stride = stride;
    d.dst.partitions = 5;
    const std::string e = load_error(tpg::forged(serialize_compiled(m, trn2()), "forged-stride-" + std::to_string(static_cast<uint64_t>(stride) % 1000)));
    EXPECT_EQ(e.rfind("model.tpg: invalid program for segment", 0), 0u) << e;
    EXPECT_TRUE(e.find("too large") != std::string::npos || e.find("reaches bytes") != std::string::npos) << e;
  }
}

// Free counts whose product overflows int64 (2^31 x 2^31 x 2^31 x 2^31 with stride 0, an
// extent of one element) would loop for ever: refused by the checked size.
TEST(CompiledModelIo, ForgedPatternWithOverflowingSizeIsRefused) {
  CompiledModel m = sample_model(DTypePolicy::FP32);
  isa::Dma& d = tpg::first_dma(m, false);
  d.src.ndims = 4;
  for (auto& dim : d.src.dims) dim = {0, INT32_MAX};
  const std::string e = load_error(tpg::forged(serialize_compiled(m, trn2()), "forged-size"));
  EXPECT_EQ(e.rfind("model.tpg: invalid program for segment", 0), 0u) << e;
  EXPECT_NE(e.find("too large"), std::string::npos) << e;
}

// An HBM tensor whose declared size overflows int64 is refused while reading.
TEST(CompiledModelIo, ForgedTensorSizeIsRefused) {
  CompiledModel m = sample_model(DTypePolicy::FP32);
  for (auto& s : m.segments)
    if (!s.program.tensors.empty()) { s.program.tensors[0].shape = {int64_t{1} << 40, int64_t{1} << 40}; break; }
  const std::string e = load_error(tpg::forged(serialize_compiled(m, trn2()), "forged-tensor-size"));
  EXPECT_EQ(e.rfind("model.tpg: corrupt or truncated file: HBM tensor dim", 0), 0u) << e;
  EXPECT_NE(e.find("too large"), std::string::npos) << e;
}

}  // namespace
}  // namespace trnsim::compiler

namespace trnsim::compiler {
namespace {

// Fuzz findings of format 2 (fuzz/regressions/tpg/semaphores-2pow28, output-shape-2pow52,
// hbm-5gib-functional) forged again on the current format, so that the replayed corpus
// reaches the checks they were found by instead of stopping at the version. The replay
// (fuzz_regressions_tpg, 1 GiB memory limit) runs them; here each must load or be refused
// with a typed error that is not about the version.
TEST(CompiledModelIo, EarlierFuzzFindingsForgedOnTheCurrentFormatPassTheVersionCheck) {
  auto first_kernel = [](CompiledModel& m) -> isa::Program& {
    for (auto& s : m.segments)
      if (s.kind == Segment::Kind::Kernel && !s.program.tensors.empty()) return s.program;
    throw std::logic_error("the sample model has no kernel");
  };
  CompiledModel sem = sample_model(DTypePolicy::FP32);
  first_kernel(sem).semaphores = 1u << 28;  // 2^28 semaphores, allocated by a run
  CompiledModel out = sample_model(DTypePolicy::FP32);
  out.shapes[out.outputs.at(0)] = {int64_t{1} << 26, int64_t{1} << 26};  // a 2^52-value output
  CompiledModel hbm = sample_model(DTypePolicy::FP32);
  first_kernel(hbm).tensors[0].shape = {int64_t{5} << 28};  // 5 GiB of fp32 HBM for a functional run
  for (const auto& [m, name] : {std::pair{&sem, "v5-semaphores-2pow28"}, std::pair{&out, "v5-output-shape-2pow52"},
                                std::pair{&hbm, "v5-hbm-5gib-functional"}}) {
    const std::string e = load_error(tpg::forged(serialize_compiled(*m, trn2()), name));
    EXPECT_EQ(e.find("format version"), std::string::npos) << name << ": " << e;
  }
}

}  // namespace
}  // namespace trnsim::compiler
