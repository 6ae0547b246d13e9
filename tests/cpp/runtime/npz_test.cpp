// .npz inputs: .npy headers and dtypes parsed against hand-written bytes (the format spec),
// archives both stored (written here, byte by byte, as np.savez does) and deflated (as
// np.savez_compressed), clear errors for what is not supported, the checks against the
// model's inputs, and value specialisation of shape-operand inputs.
#include <gtest/gtest.h>
#include <zip.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "../compiler/onnx_model.h"
#include "trnsim/common/error.h"
#include "trnsim/compiler/compile.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/hw/spec_loader.h"
#include "trnsim/runtime/loaded_model.h"
#include "trnsim/runtime/npz.h"
#include "trnsim/runtime/value_specialisation.h"

namespace trnsim::runtime {
namespace {

using testing::OnnxModel;

// A version-1 .npy: magic, version, header length, the dict padded with spaces to a multiple
// of 64 bytes and ended by '\n', then the raw data.
std::string npy(const std::string& descr, const std::string& shape, const void* data, size_t bytes, bool fortran = false) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  const uint16_t n = static_cast<uint16_t>(dict.size());
  out.append(reinterpret_cast<const char*>(&n), 2);
  out += dict;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

uint32_t crc32(const std::string& s) {  // the zip CRC (reflected 0xEDB88320)
  uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

// A zip archive with stored (uncompressed) members, as np.savez writes.
std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, central;
  auto u16 = [](std::string& s, uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); };
  auto u32 = [](std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); };
  for (const auto& [name, data] : members) {
    const uint32_t offset = static_cast<uint32_t>(out.size()), crc = crc32(data), size = static_cast<uint32_t>(data.size());
    u32(out, 0x04034b50); u16(out, 20); u16(out, 0); u16(out, 0); u16(out, 0); u16(out, 0x21);
    u32(out, crc); u32(out, size); u32(out, size); u16(out, static_cast<uint16_t>(name.size())); u16(out, 0);
    out += name;
    out += data;
    u32(central, 0x02014b50); u16(central, 20); u16(central, 20); u16(central, 0); u16(central, 0); u16(central, 0);
    u16(central, 0x21); u32(central, crc); u32(central, size); u32(central, size);
    u16(central, static_cast<uint16_t>(name.size())); u16(central, 0); u16(central, 0); u16(central, 0); u16(central, 0);
    u32(central, 0); u32(central, offset);
    central += name;
  }
  const uint32_t cd_offset = static_cast<uint32_t>(out.size());
  out += central;
  u32(out, 0x06054b50); u16(out, 0); u16(out, 0);
  u16(out, static_cast<uint16_t>(members.size())); u16(out, static_cast<uint16_t>(members.size()));
  u32(out, static_cast<uint32_t>(central.size())); u32(out, cd_offset); u16(out, 0);
  return out;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("trnsim_npz_test_" + name)).string();
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A deflated archive through libzip's writer (as np.savez_compressed).
void deflated_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  for (const auto& [name, data] : members) {
    zip_source_t* s = zip_source_buffer(z, data.data(), data.size(), 0);
    const zip_int64_t i = zip_file_add(z, name.c_str(), s, ZIP_FL_OVERWRITE);
    ASSERT_GE(i, 0);
    ASSERT_EQ(zip_set_file_compression(z, static_cast<zip_uint64_t>(i), ZIP_CM_DEFLATE, 9), 0);
  }
  ASSERT_EQ(zip_close(z), 0);
}

std::string npy_error(const std::string& bytes) {
  try {
    parse_npy(bytes, "t.npz: member 'x.npy'");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Npy, EveryDtypeDecodesToItsValues) {
  const float f32[] = {1.5f, -2.25f, 3e-8f};
  NpyArray a = parse_npy(npy("<f4", "(3,)", f32, sizeof f32), "x");
  EXPECT_EQ(a.dtype, "float32");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(a.values, (std::vector<double>{1.5, -2.25, static_cast<double>(3e-8f)}));
  EXPECT_FALSE(a.integral());

  const double f64[] = {0.1, -1e300};
  a = parse_npy(npy("<f8", "(1, 2)", f64, sizeof f64), "x");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(a.values, (std::vector<double>{0.1, -1e300}));

  // binary16: 1, -2, 1/3 rounded (0x3555 = 0.333251953125), the smallest subnormal 2^-24, +inf
  const uint16_t f16[] = {0x3c00, 0xc000, 0x3555, 0x0001, 0x7c00};
  a = parse_npy(npy("<f2", "(5,)", f16, sizeof f16), "x");
  EXPECT_EQ(a.dtype, "float16");
  EXPECT_EQ(a.values[0], 1.0);
  EXPECT_EQ(a.values[1], -2.0);
  EXPECT_EQ(a.values[2], 0.333251953125);
  EXPECT_EQ(a.values[3], std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(a.values[4]));

  const int64_t i64[] = {-3, int64_t{1} << 40, 7, 0};
  a = parse_npy(npy("<i8", "(2, 2)", i64, sizeof i64), "x");
  EXPECT_EQ(a.dtype, "int64");
  EXPECT_TRUE(a.integral());
  EXPECT_EQ(a.values, (std::vector<double>{-3, 1099511627776.0, 7, 0}));

  const int32_t i32[] = {-2147483647 - 1, 5};
  a = parse_npy(npy("<i4", "(2,)", i32, sizeof i32), "x");
  EXPECT_EQ(a.values, (std::vector<double>{-2147483648.0, 5}));

  const uint8_t b[] = {1, 0, 1};
  a = parse_npy(npy("|b1", "(3,)", b, sizeof b), "x");
  EXPECT_EQ(a.dtype, "bool");
  EXPECT_EQ(a.values, (std::vector<double>{1, 0, 1}));

  const float scalar = 4.0f;  // a 0-d array: shape ()
  a = parse_npy(npy("<f4", "()", &scalar, 4), "x");
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(a.values, (std::vector<double>{4.0}));
}

TEST(Npy, UnsupportedOrBrokenArraysAreNamedErrors) {
  const float f[4] = {};
  EXPECT_NE(npy_error(npy("<c8", "(2,)", f, 16)).find("t.npz: member 'x.npy': unsupported dtype '<c8'"), std::string::npos);
  EXPECT_NE(npy_error(npy(">f4", "(2,)", f, 8)).find("unsupported dtype '>f4'"), std::string::npos);
  EXPECT_NE(npy_error(npy("<f4", "(2, 2)", f, 16, true)).find("Fortran-order"), std::string::npos);
  EXPECT_NE(npy_error(npy("<f4", "(2, 3)", f, 16)).find("data holds 16 bytes, shape 2x3 of float32 needs 24"), std::string::npos);
  EXPECT_NE(npy_error("PK\x03\x04 not npy").find("not a .npy array"), std::string::npos);
  std::string cut = npy("<f4", "(2,)", f, 8);
  EXPECT_NE(npy_error(cut.substr(0, 20)).find("truncated .npy header"), std::string::npos);
  for (size_t n = 0; n < cut.size(); ++n) EXPECT_NE(npy_error(cut.substr(0, n)), "") << n;  // never a crash
}

TEST(Npz, StoredAndDeflatedArchivesReadTheSame) {
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const int64_t ids[2] = {101, 2054};
  const std::vector<std::pair<std::string, std::string>> members = {
      {"x.npy", npy("<f4", "(2, 3)", x, sizeof x)}, {"input_ids.npy", npy("<i8", "(1, 2)", ids, sizeof ids)}};
  const std::string stored = temp_path("stored.npz"), deflated = temp_path("deflated.npz");
  write(stored, stored_zip(members));
  deflated_zip(deflated, members);
  for (const auto& path : {stored, deflated}) {
    const auto arrays = read_npz(path);
    ASSERT_EQ(arrays.size(), 2u) << path;
    EXPECT_EQ(arrays.at("x").shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(arrays.at("x").values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(arrays.at("input_ids").values, (std::vector<double>{101, 2054}));
  }
  std::filesystem::remove(stored);
  std::filesystem::remove(deflated);
}

std::string npz_error(const std::string& path) {
  try {
    read_npz(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Npz, BadArchivesAreNamedErrors) {
  const std::string missing = temp_path("missing.npz");
  EXPECT_NE(npz_error(missing).find(missing + ": cannot read the .npz archive"), std::string::npos) << npz_error(missing);
  const std::string junk = temp_path("junk.npz");
  write(junk, "this is not a zip archive at all, just text");
  EXPECT_NE(npz_error(junk).find(junk + ": cannot read the .npz archive"), std::string::npos) << npz_error(junk);
  const float x[2] = {1, 2};
  write(junk, stored_zip({{"notes.txt", "hello"}}));
  EXPECT_NE(npz_error(junk).find("member 'notes.txt': not a .npy array"), std::string::npos) << npz_error(junk);
  write(junk, stored_zip({{"x.npy", npy("<u4", "(2,)", x, 8)}}));
  EXPECT_NE(npz_error(junk).find("member 'x.npy': unsupported dtype '<u4'"), std::string::npos) << npz_error(junk);
  // Every truncation of an archive, and a damaged data byte (CRC mismatch), is an Error.
  const std::string good = stored_zip({{"x.npy", npy("<f4", "(2,)", x, 8)}});
  for (size_t n = 0; n < good.size(); ++n) {
    write(junk, good.substr(0, n));
    EXPECT_NE(npz_error(junk), "") << "cut at " << n;
  }
  std::string bad = good;
  bad[30 + 5 + 64 + 1] ^= 0x40;  // local header 30 + "x.npy" + the 64-byte .npy header: data
  write(junk, bad);
  EXPECT_NE(npz_error(junk).find("member 'x.npy': cannot read"), std::string::npos) << npz_error(junk);
  std::filesystem::remove(junk);
}

// A zip bomb: members of zeros that deflate ~1000:1. Under a memory limit of 4 MiB the
// archive's directory (16 members announcing 8 MiB together) is refused before anything is
// inflated, naming the limit and the variable that raises it; with the limit raised it reads.
TEST(Npz, ZipBombIsRefusedFromItsDirectory) {
  const std::string zeros(512 * 1024, '\0');
  std::vector<std::pair<std::string, std::string>> members;
  for (int i = 0; i < 16; ++i) members.push_back({"m" + std::to_string(i) + ".npy", npy("|u1", "(524288,)", zeros.data(), zeros.size())});
  const std::string path = temp_path("bomb.npz");
  deflated_zip(path, members);
  EXPECT_LT(std::filesystem::file_size(path), 64u * 1024);
  ::setenv("TRNSIM_MAX_MEMORY", "4M", 1);
  const std::string e = npz_error(path);
  EXPECT_NE(e.find(path + ": reading the archive's 16 members"), std::string::npos) << e;
  EXPECT_NE(e.find("above the limit of"), std::string::npos) << e;
  EXPECT_NE(e.find("TRNSIM_MAX_MEMORY"), std::string::npos) << e;
  // The decoded values (8 bytes per element) count too: 8 MiB read, 64 MiB decoded.
  ::setenv("TRNSIM_MAX_MEMORY", "32M", 1);
  EXPECT_NE(npz_error(path).find("the archive's arrays"), std::string::npos) << npz_error(path);
  ::setenv("TRNSIM_MAX_MEMORY", "1G", 1);
  EXPECT_EQ(npz_error(path), "");
  ::unsetenv("TRNSIM_MAX_MEMORY");
  std::filesystem::remove(path);
}

// The same reader from bytes in memory (the fuzz target's and Python's entry point).
TEST(Npz, BytesInMemoryReadAsTheFile) {
  const float x[2] = {1.5f, -2};
  const auto arrays = read_npz_bytes(stored_zip({{"x.npy", npy("<f4", "(2,)", x, 8)}}), "mem.npz");
  EXPECT_EQ(arrays.at("x").values, (std::vector<double>{1.5, -2}));
  try {
    read_npz_bytes("PK junk", "mem.npz");
    ADD_FAILURE() << "junk was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("mem.npz: cannot read the .npz archive", 0), 0u) << e.what();
  }
}

struct Model {
  hw::ChipSpec chip = hw::load_chip("trn2");
  compiler::Graph g;
  Model() {
    // y = reshape(x * 2, shape): the shape is a graph input (a shape operand).
    OnnxModel m;
    m.input("x", {2, 6}).input("shape", {2}, onnx::TensorProto::INT64).floats("two", {}, {2.0f});
    m.node("Mul", {"x", "two"}, {"x2"}, "mul");
    m.node("Reshape", {"x2", "shape"}, {"r"}, "reshape");
    m.node("Relu", {"r"}, {"y"}, "relu");
    m.output("y");
    g = compiler::import_onnx_bytes(m.bytes());
  }
};

NpyArray array(std::string dtype, std::vector<int64_t> shape, std::vector<double> v) {
  NpyArray a;
  a.dtype = std::move(dtype);
  a.shape = std::move(shape);
  a.values = std::move(v);
  return a;
}

TEST(ValueSpecialisation, ShapeInputIsBoundFromTheArchive) {
  Model m;
  EXPECT_THROW(compiler::compile(m.g, m.chip), ConstantRequiredError);
  std::map<std::string, NpyArray> values = {
      {"x", array("float32", {2, 6}, {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12})},
      {"shape", array("int64", {2}, {3, 4})}};
  const SpecialisedModel sm = compile_specialised(m.g, m.chip, {}, values);
  EXPECT_EQ(sm.specialised, (std::vector<std::string>{"shape"}));
  EXPECT_EQ(sm.model.inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(sm.model.shapes.at("y"), (compiler::Shape{3, 4}));
  const auto in = model_inputs(values, sm.model, "in.npz", sm.specialised);
  LoadedModel lm(sm.model, m.chip);
  const auto out = lm.run(in, core::Mode::Functional).outputs.at("y");
  ASSERT_EQ(out.size(), 12u);
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(out[i], std::max(0.0f, 2.0f * static_cast<float>(values["x"].values[i]))) << i;

  // A float array cannot be a shape: the compiler's refusal stands.
  values["shape"] = array("float32", {2}, {3, 4});
  EXPECT_THROW(compile_specialised(m.g, m.chip, {}, values), ConstantRequiredError);
}

std::string inputs_error(const std::map<std::string, NpyArray>& values, const compiler::CompiledModel& cm,
                         const std::vector<std::string>& spec = {}) {
  try {
    model_inputs(values, cm, "in.npz", spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ValueSpecialisation, ArraysMustMatchTheModelsInputs) {
  Model m;
  std::map<std::string, NpyArray> values = {{"x", array("float32", {2, 6}, std::vector<double>(12, 1.0))},
                                            {"shape", array("int64", {2}, {4, 3})}};
  const SpecialisedModel sm = compile_specialised(m.g, m.chip, {}, values);
  EXPECT_EQ(inputs_error(values, sm.model, sm.specialised), "");
  auto v = values;
  v["x"] = array("float32", {3, 4}, std::vector<double>(12, 1.0));
  EXPECT_NE(inputs_error(v, sm.model, sm.specialised).find("in.npz: input 'x' has shape [3, 4], the program was compiled for [2, 6]"),
            std::string::npos) << inputs_error(v, sm.model, sm.specialised);
  v = values;
  v.erase("x");
  EXPECT_NE(inputs_error(v, sm.model, sm.specialised).find("in.npz: no array 'x'"), std::string::npos);
  v = values;
  v["typo"] = array("float32", {1}, {0});
  EXPECT_NE(inputs_error(v, sm.model, sm.specialised).find("array 'typo' is not an input of the model"), std::string::npos);
  v = values;
  v["shape"] = array("int64", {2}, {2, 6});  // not the value the program was specialised on
  EXPECT_NE(inputs_error(v, sm.model).find("array 'shape'"), std::string::npos) << inputs_error(v, sm.model);
}

}  // namespace
}  // namespace trnsim::runtime
