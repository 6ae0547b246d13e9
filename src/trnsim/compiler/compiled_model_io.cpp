#include "trnsim/compiler/compiled_model_io.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "trnsim/common/error.h"
#include "trnsim/common/checked.h"
#include "trnsim/common/file_read.h"
#include "trnsim/common/json_text.h"
#include "trnsim/common/limits.h"
#include "trnsim/hw/spec_json.h"
#include "trnsim/isa/program_io.h"
#include "trnsim/isa/validate.h"

namespace trnsim::compiler {

using isa::BinaryReader;
using isa::BinaryWriter;

namespace {

constexpr int kElemTypes = static_cast<int>(ElemType::UInt2) + 1;
constexpr size_t kHeaderFixed = 8 + 4;  // magic, version

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) { h ^= c; h *= 1099511628211ull; }
  return h;
}

// ---- small containers ---------------------------------------------------------------------

void put_strings(BinaryWriter& w, const std::vector<std::string>& v) {
  w.u64(v.size());
  for (const auto& s : v) w.str(s);
}
std::vector<std::string> get_strings(BinaryReader& r, const char* what) {
  std::vector<std::string> v(r.count(what, 8));
  for (auto& s : v) s = r.str(what);
  return v;
}
void put_ints(BinaryWriter& w, const std::vector<int64_t>& v) {
  w.u64(v.size());
  for (int64_t x : v) w.i64(x);
}
std::vector<int64_t> get_ints(BinaryReader& r, const char* what) {
  std::vector<int64_t> v(r.count(what, 8));
  for (auto& x : v) x = r.i64(what);
  return v;
}
// Doubles in bulk (constants are most of a file's bytes). Values that are all exactly fp32
// (weights imported from fp32 ONNX tensors) are stored as fp32: half the bytes, same values.
void put_doubles(BinaryWriter& w, const std::vector<double>& v) {
  bool fp32 = true;
  for (double x : v)
    if (static_cast<double>(static_cast<float>(x)) != x) { fp32 = false; break; }
  w.boolean(fp32);
  w.u64(v.size());
  if (!fp32) { w.raw(v.data(), v.size() * sizeof(double)); return; }
  std::vector<float> f(v.begin(), v.end());
  w.raw(f.data(), f.size() * sizeof(float));
}
std::vector<double> get_doubles(BinaryReader& r, const char* what) {
  const bool fp32 = r.boolean(what);
  if (!fp32) {
    std::vector<double> v(r.count(what, sizeof(double)));
    r.raw(v.data(), v.size() * sizeof(double), what);
    return v;
  }
  std::vector<float> f(r.count(what, sizeof(float)));
  r.raw(f.data(), f.size() * sizeof(float), what);
  return std::vector<double>(f.begin(), f.end());
}

// ---- graph --------------------------------------------------------------------------------

void put_tensor(BinaryWriter& w, const TensorInfo& t) {
  w.str(t.name);
  w.u8(static_cast<uint8_t>(t.type));
  put_ints(w, t.shape);
  w.boolean(t.shape_known);
  put_strings(w, t.dim_params);
  // Constants as the IR holds them (const_data.h): 0 none, 1 decoded doubles, 2 bytes of
  // their type, 3 shape-only (compiled timing-only).
  const ConstData* d = t.data ? &*t.data : nullptr;
  std::optional<ConstData> narrow;  // values a pass left decoded that fit the type (quantised weights)
  if (d && d->loaded() && !d->is_encoded() && t.type != ElemType::Double) d = &narrow.emplace(ConstData::packed(t.type, d->values(), 0));
  w.u8(!d ? 0 : d->is_encoded() ? 2 : !d->loaded() ? 3 : 1);
  if (!d) return;
  if (d->is_encoded() || !d->loaded()) {
    w.u8(static_cast<uint8_t>(d->encoding()));
    w.i64(static_cast<int64_t>(d->size()));
    if (d->is_encoded()) w.str(d->bytes());
  } else {
    put_doubles(w, d->values());
  }
}
TensorInfo get_tensor(BinaryReader& r) {
  TensorInfo t;
  t.name = r.str("tensor name");
  t.type = r.enumeration<ElemType>("tensor element type", kElemTypes);
  t.shape = get_ints(r, "tensor shape");
  t.shape_known = r.boolean("tensor shape flag");
  t.dim_params = get_strings(r, "tensor dim params");
  const uint8_t form = r.u8("tensor constant form");
  if (form > 3) r.fail("tensor constant form", fmt::format("value {} out of range (< 4)", form));
  if (form == 1) t.data = get_doubles(r, "tensor constant data");
  if (form >= 2) {
    const auto type = r.enumeration<ElemType>("tensor constant type", kElemTypes);
    const int64_t count = r.i64("tensor constant count");
    if (count < 0) r.fail("tensor constant count", fmt::format("negative count {}", count));
    if (count > std::numeric_limits<int64_t>::max() / 8)  // its byte size must fit int64 (fuzz, tpg)
      r.fail("tensor constant count", fmt::format("tensor '{}': {} elements, past any byte size", t.name, count));
    if (form == 3) {
      t.data = ConstData::shape_only(type, count);
    } else {
      std::string bytes = r.str("tensor constant bytes");
      if (static_cast<int64_t>(bytes.size()) != encoded_bytes(type, count))
        r.fail("tensor constant bytes", fmt::format("tensor '{}': {} bytes for {} elements of {}", t.name, bytes.size(), count, elem_name(type)));
      t.data = ConstData::owned(type, count, std::move(bytes));
    }
  }
  if (t.data) {
    int64_t count = 0;
    try {  // a corrupt shape overflows: an error naming the file, as every other field's
      count = t.shape_known ? numel(t.shape) : 0;
    } catch (const ShapeError& e) {
      r.fail("tensor shape", e.what());
    }
    if (t.shape_known && static_cast<int64_t>(t.data->size()) != count)
      r.fail("tensor constant data", fmt::format("tensor '{}' has {} values for shape {}", t.name, t.data->size(), shape_str(t.shape)));
  }
  return t;
}

void put_attr(BinaryWriter& w, const AttrValue& a) {
  w.u8(static_cast<uint8_t>(a.index()));
  std::visit([&](const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, int64_t>) w.i64(v);
    else if constexpr (std::is_same_v<T, double>) w.f64(v);
    else if constexpr (std::is_same_v<T, std::string>) w.str(v);
    else if constexpr (std::is_same_v<T, std::vector<int64_t>>) put_ints(w, v);
    else if constexpr (std::is_same_v<T, std::vector<double>>) put_doubles(w, v);
    else put_tensor(w, v);
  }, a);
}
AttrValue get_attr(BinaryReader& r) {
  switch (r.u8("attribute kind")) {
    case 0: return r.i64("int attribute");
    case 1: return r.f64("float attribute");
    case 2: return r.str("string attribute");
    case 3: return get_ints(r, "ints attribute");
    case 4: return get_doubles(r, "floats attribute");
    case 5: return get_tensor(r);
    default: r.fail("attribute kind", "not one of int, float, string, ints, floats, tensor");
  }
}

OpKind get_op(BinaryReader& r, const char* what) {
  const std::string name = r.str(what);
  auto k = op_from_name(name);
  if (!k) r.fail(what, fmt::format("unknown op '{}'", name));
  return *k;
}

void put_graph(BinaryWriter& w, const Graph& g) {
  w.str(g.name);
  w.i32(g.opset);
  w.i32(g.counter);
  put_strings(w, g.inputs);
  put_strings(w, g.outputs);
  w.u64(g.tensors.size());
  for (const auto& [name, t] : g.tensors) put_tensor(w, t);
  w.u64(g.nodes.size());
  for (const auto& n : g.nodes) {
    w.str(op_name(n.op));
    w.str(n.name);
    put_strings(w, n.inputs);
    put_strings(w, n.outputs);
    w.u64(n.attrs.size());
    for (const auto& [k, v] : n.attrs) { w.str(k); put_attr(w, v); }
    w.u64(n.epilogue.size());
    for (const auto& e : n.epilogue) {
      w.str(op_name(e.op));
      w.str(e.operand);
      w.boolean(e.operand_first);
      w.str(e.fused_node);
    }
  }
}
Graph get_graph(BinaryReader& r) {
  Graph g;
  g.name = r.str("graph name");
  g.opset = r.i32("graph opset");
  g.counter = r.i32("graph name counter");
  g.inputs = get_strings(r, "graph inputs");
  g.outputs = get_strings(r, "graph outputs");
  const size_t nt = r.count("graph tensor count", 8);
  for (size_t i = 0; i < nt; ++i) {
    TensorInfo t = get_tensor(r);
    std::string name = t.name;
    g.tensors.emplace(std::move(name), std::move(t));
  }
  g.nodes.resize(r.count("graph node count", 8));
  for (auto& n : g.nodes) {
    n.op = get_op(r, "node op");
    n.name = r.str("node name");
    n.inputs = get_strings(r, "node inputs");
    n.outputs = get_strings(r, "node outputs");
    const size_t na = r.count("node attribute count", 9);
    for (size_t i = 0; i < na; ++i) {
      std::string k = r.str("attribute name");
      n.attrs.emplace(std::move(k), get_attr(r));
    }
    n.epilogue.resize(r.count("node epilogue count", 8));
    for (auto& e : n.epilogue) {
      e.op = get_op(r, "epilogue op");
      e.operand = r.str("epilogue operand");
      e.operand_first = r.boolean("epilogue operand order");
      e.fused_node = r.str("epilogue fused node");
    }
  }
  return g;
}

// ---- the model ----------------------------------------------------------------------------

void put_model(BinaryWriter& w, const CompiledModel& m) {
  w.u8(static_cast<uint8_t>(m.policy));
  w.f64(m.compile_time_s);
  put_strings(w, m.inputs);
  put_strings(w, m.outputs);
  w.u64(m.shapes.size());
  for (const auto& [n, s] : m.shapes) { w.str(n); put_ints(w, s); }
  w.i64(m.hbm.weight_bytes);
  w.i64(m.hbm.io_bytes);
  w.i64(m.hbm.peak_activation_bytes);
  w.i64(m.hbm.capacity_bytes);
  w.u64(m.passes.size());
  for (const auto& p : m.passes) { w.str(p.name); w.f64(p.seconds); w.str(p.ir); }
  put_graph(w, m.graph);
  w.u64(m.segments.size());
  for (const auto& s : m.segments) {
    w.u8(static_cast<uint8_t>(s.kind));
    w.str(s.node);
    w.str(s.op);
    put_strings(w, s.fused);
    isa::write_program(w, s.program);
    put_strings(w, s.reads);
    put_strings(w, s.writes);
    w.str(s.alias_of);
  }
}

CompiledModel get_model(BinaryReader& r) {
  CompiledModel m;
  m.policy = r.enumeration<DTypePolicy>("dtype policy", 3);
  m.compile_time_s = r.f64("compile time");
  m.inputs = get_strings(r, "model inputs");
  m.outputs = get_strings(r, "model outputs");
  const size_t ns = r.count("shape count", 16);
  for (size_t i = 0; i < ns; ++i) {
    std::string n = r.str("shape name");
    m.shapes[n] = get_ints(r, "shape");
  }
  m.hbm.weight_bytes = r.i64("HBM plan weight bytes");
  m.hbm.io_bytes = r.i64("HBM plan io bytes");
  m.hbm.peak_activation_bytes = r.i64("HBM plan activation bytes");
  m.hbm.capacity_bytes = r.i64("HBM plan capacity");
  m.passes.resize(r.count("pass count", 24));
  for (auto& p : m.passes) { p.name = r.str("pass name"); p.seconds = r.f64("pass seconds"); p.ir = r.str("pass IR"); }
  m.graph = get_graph(r);
  m.segments.resize(r.count("segment count", 16));
  for (auto& s : m.segments) {
    s.kind = r.enumeration<Segment::Kind>("segment kind", 2);
    s.node = r.str("segment node");
    s.op = r.str("segment op");
    s.fused = get_strings(r, "segment fused nodes");
    s.program = isa::read_program(r);
    s.reads = get_strings(r, "segment reads");
    s.writes = get_strings(r, "segment writes");
    s.alias_of = r.str("segment alias");
  }
  return m;
}

// Cross-references the runtime relies on: every name a segment, input or output uses is a
// tensor of the graph, and every input/output has a shape.
void check_references(const CompiledModel& m, const std::string& source) {
  auto need = [&](const std::string& n, const std::string& where) {
    if (!m.graph.tensors.count(n))
      throw Error(fmt::format("{}: corrupt file: {} names tensor '{}' that the graph does not have", source, where, n));
  };
  // Shapes drive host allocations at run time (inputs, outputs): checked and bounded here (a
  // fuzzed file asked for 2^52 output values).
  for (const auto& [n, shape] : m.shapes) {
    int64_t count = 0;
    try {
      count = checked_numel(shape, fmt::format("{}: shape of '{}'", source, n));
    } catch (const ShapeError& e) {
      throw Error(fmt::format("corrupt file: {}", e.what()));
    }
    check_memory(4.0 * static_cast<double>(count), fmt::format("{}: tensor '{}' of shape {}", source, n, shape_str(shape)));
  }
  for (const auto& n : m.inputs) { need(n, "the inputs"); if (!m.shapes.count(n)) throw Error(fmt::format("{}: corrupt file: input '{}' has no shape", source, n)); }
  for (const auto& n : m.outputs) { need(n, "the outputs"); if (!m.shapes.count(n)) throw Error(fmt::format("{}: corrupt file: output '{}' has no shape", source, n)); }
  for (const auto& s : m.segments) {
    for (const auto& n : s.reads) need(n, "segment '" + s.node + "'");
    for (const auto& n : s.writes) need(n, "segment '" + s.node + "'");
    if (s.kind == Segment::Kind::Alias && (s.reads.size() != 1 || s.writes.size() != 1))
      throw Error(fmt::format("{}: corrupt file: alias segment '{}' must read and write one tensor", source, s.node));
  }
}

CompiledHeader read_header(BinaryReader& r) {
  char magic[8];
  r.raw(magic, 8, "magic");
  if (std::memcmp(magic, kCompiledMagic, 8) != 0)
    throw Error(fmt::format("{}: not a trnsim compiled program (no TRNSIMPG magic; compile one with `trnsim compile model.onnx -o file.tpg`)", r.source()));
  CompiledHeader h;
  h.version = r.u32("format version");
  if (h.version < kOldestReadableFormatVersion || h.version > kCompiledFormatVersion)
    throw Error(fmt::format("{}: compiled program format version {}, this trnsim reads version {} (and back to {}): compile the model again",
                            r.source(), h.version, kCompiledFormatVersion, kOldestReadableFormatVersion));
  h.chip = r.str("chip name");
  h.chip_hash = r.u64("chip spec hash");
  return h;
}

// A saved program holds the model's constants: bounded by the host memory limit, so that
// /dev/zero or a huge file is refused before it is read whole.
std::string read_file(const std::string& path) {
  return read_file_bounded(path, memory_limit_bytes(), fmt::format("the host memory limit; set {} to raise it", kMemoryLimitVariable));
}

}  // namespace

uint64_t chip_spec_hash(const hw::ChipSpec& chip) {
  nlohmann::json j = hw::to_json(chip);
  j.erase("source");
  return fnv1a(json_text(j));
}

std::string serialize_compiled(const CompiledModel& model, const hw::ChipSpec& chip) {
  BinaryWriter payload;
  put_model(payload, model);
  BinaryWriter w;
  w.raw(kCompiledMagic, 8);
  w.u32(kCompiledFormatVersion);
  w.str(chip.name);
  w.u64(chip_spec_hash(chip));
  w.u64(payload.bytes().size());
  w.u64(fnv1a(payload.bytes()));
  w.raw(payload.bytes().data(), payload.bytes().size());
  return w.take();
}

void save_compiled(const CompiledModel& model, const hw::ChipSpec& chip, const std::string& path) {
  const std::string bytes = serialize_compiled(model, chip);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(fmt::format("cannot write '{}'", path));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f.flush()) throw Error(fmt::format("cannot write '{}'", path));
}

bool is_compiled_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[8] = {};
  return f && f.read(magic, 8) && std::memcmp(magic, kCompiledMagic, 8) == 0;
}

CompiledHeader read_compiled_header(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("{}: cannot read the file", path));
  std::string bytes(4096, '\0');  // magic, version, chip name (short), hash
  f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(f.gcount()));
  BinaryReader r(bytes, path);
  return read_header(r);
}

CompiledModel deserialize_compiled(const std::string& bytes, const std::string& source, const hw::ChipSpec& chip) {
  BinaryReader r(bytes, source);
  const CompiledHeader h = read_header(r);
  if (h.chip != chip.name)
    throw Error(fmt::format("{}: compiled for chip '{}', not '{}' (omit --chip, or compile again for {})", source, h.chip, chip.name, chip.name));
  if (h.chip_hash != chip_spec_hash(chip))
    throw Error(fmt::format("{}: compiled for a different spec of chip '{}' (spec hash {:016x}, this one {:016x}): compile the model again",
                            source, h.chip, h.chip_hash, chip_spec_hash(chip)));
  const uint64_t size = r.u64("payload size");
  const uint64_t hash = r.u64("payload hash");
  if (size != r.remaining())
    throw Error(fmt::format("{}: truncated or corrupt file: the header announces {} payload bytes, the file has {}", source, size, r.remaining()));
  const size_t start = r.offset();
  const std::string_view payload = std::string_view(bytes).substr(start);
  if (fnv1a(payload) != hash)
    throw Error(fmt::format("{}: corrupt file: the payload hash does not match (the file was changed or damaged)", source));
  BinaryReader pr(payload, source, start);
  CompiledModel m = get_model(pr);
  if (pr.remaining() != 0)
    throw Error(fmt::format("{}: corrupt file: {} unexpected bytes after the model", source, pr.remaining()));
  m.chip = h.chip;
  check_references(m, source);
  // The simulator trusts a Program's operands (the builder validated them when it emitted
  // them); a file is not the builder, so check each against the chip before anything runs.
  for (const auto& s : m.segments) {
    if (s.kind != Segment::Kind::Kernel) continue;
    try {
      isa::validate(s.program, chip);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: invalid program for segment '{}': {}", source, s.node, e.what()));
    }
  }
  return m;
}

CompiledModel load_compiled(const std::string& path, const hw::ChipSpec& chip) {
  return deserialize_compiled(read_file(path), path, chip);
}

}  // namespace trnsim::compiler
