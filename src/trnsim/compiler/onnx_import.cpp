#include "trnsim/common/progress.h"
#include "trnsim/compiler/onnx_import.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <optional>
#include <string_view>

#include "trnsim/common/checked.h"
#include "trnsim/common/error.h"
#include "trnsim/common/file_read.h"
#include "trnsim/numerics/convert.h"

namespace trnsim::compiler {
namespace {

using onnx::TensorProto;

ElemType elem_type(int t, const std::string& where) {
  switch (t) {
    case TensorProto::FLOAT: return ElemType::Float;
    case TensorProto::FLOAT16: return ElemType::Float16;
    case TensorProto::BFLOAT16: return ElemType::BFloat16;
    case TensorProto::DOUBLE: return ElemType::Double;
    case TensorProto::INT64: return ElemType::Int64;
    case TensorProto::INT32: return ElemType::Int32;
    case TensorProto::INT8: return ElemType::Int8;
    case TensorProto::INT16: return ElemType::Int16;
    case TensorProto::UINT16: return ElemType::UInt16;
    case TensorProto::UINT32: return ElemType::UInt32;
    case TensorProto::UINT64: return ElemType::UInt64;
    case TensorProto::UINT8: return ElemType::UInt8;
    case TensorProto::BOOL: return ElemType::Bool;
    case 17: return ElemType::Float8E4M3FN;
    case 19: return ElemType::Float8E5M2;
    case 23: return ElemType::Float4E2M1;
    default: break;
  }
  throw UnsupportedError(fmt::format("unsupported: element type {} ({})", t, where));
}

template <typename T>
void append_raw(std::string_view raw, std::vector<double>& out) {
  size_t n = raw.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    out.push_back(static_cast<double>(v));
  }
}

double half_bits(uint32_t bits, numerics::DType t) { return numerics::decode(bits, t); }

// A tensor's bytes stored beside the model (external data): the file memory-mapped read-only,
// the [offset, offset + length) range of it viewed in place. The location must stay inside
// the model's folder (after resolving '..' and symbolic links): a model file must not make
// trnsim read other files.
class ExternalData {
 public:
  ExternalData(const TensorProto& p, const std::filesystem::path& model_dir, const std::string& where) {
    namespace fs = std::filesystem;
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : p.external_data()) {
      try {
        if (kv.key() == "location") location = kv.value();
        else if (kv.key() == "offset") offset = std::stoll(kv.value());
        else if (kv.key() == "length") length = std::stoll(kv.value());
      } catch (const std::exception&) {
        throw Error(fmt::format("{}: tensor '{}': external data {} '{}' is not a number", where, p.name(), kv.key(), kv.value()));
      }
    }
    if (location.empty()) throw Error(fmt::format("{}: tensor '{}' has external data without a location", where, p.name()));
    const fs::path base = fs::weakly_canonical(model_dir.empty() ? fs::path(".") : model_dir);
    const fs::path file = fs::weakly_canonical(base / fs::path(location));
    const bool inside = fs::path(location).is_relative() &&
                        std::mismatch(base.begin(), base.end(), file.begin(), file.end()).first == base.end();
    if (!inside)
      throw Error(fmt::format("{}: tensor '{}': external data location '{}' is outside the model's folder '{}' (refused)", where, p.name(),
                              location, base.string()));
    const int fd = ::open(file.c_str(), O_RDONLY);
    if (fd < 0) throw Error(fmt::format("{}: tensor '{}': cannot open its external data file '{}'", where, p.name(), file.string()));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw Error(fmt::format("{}: tensor '{}': external data '{}' is not a regular file", where, p.name(), file.string()));
    }
    size_ = static_cast<size_t>(st.st_size);
    if (length < 0) length = static_cast<int64_t>(size_) - offset;
    if (offset < 0 || length < 0 || static_cast<uint64_t>(offset + length) > size_) {
      ::close(fd);
      throw Error(fmt::format("{}: tensor '{}': external data range [{}, {}) is outside '{}' ({} bytes)", where, p.name(), offset,
                              offset + length, file.string(), size_));
    }
    if (size_ > 0) {
      map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      ::close(fd);
      if (map_ == MAP_FAILED) throw Error(fmt::format("{}: tensor '{}': cannot map '{}'", where, p.name(), file.string()));
      bytes_ = std::string_view(static_cast<const char*>(map_) + offset, static_cast<size_t>(length));
    } else {
      ::close(fd);
    }
  }
  ~ExternalData() {
    if (map_ && map_ != MAP_FAILED) ::munmap(map_, size_);
  }
  ExternalData(const ExternalData&) = delete;
  ExternalData& operator=(const ExternalData&) = delete;
  std::string_view bytes() const { return bytes_; }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string_view bytes_;
};

// `model_dir`: the folder of the model file, where external data is looked up; null for a
// model given as bytes (external data then needs the file).
TensorInfo tensor_from_proto(const TensorProto& p, const std::string& where, const std::filesystem::path* model_dir) {
  TensorInfo t;
  t.name = p.name();
  t.type = elem_type(p.data_type(), where);
  for (auto d : p.dims()) t.shape.push_back(d);
  t.shape_known = true;
  std::optional<ExternalData> ext;
  if (p.data_location() == TensorProto::EXTERNAL) {
    if (!model_dir)
      throw UnsupportedError(fmt::format("unsupported: external tensor data for '{}' ({}) in a model given as bytes: load the model "
                                         "from its file, next to its data", p.name(), where));
    ext.emplace(p, *model_dir, where);
  }
  // Checked (negative dims, overflow) before anything is sized from the shape; the values are
  // then sized from the data the file holds, never from the shape it claims (a 10 GB shape
  // with no data was a 10 GB reserve).
  const int64_t want_values = checked_numel(t.shape, fmt::format("{}: tensor '{}'", where, p.name()));
  const std::string_view raw = ext ? ext->bytes() : std::string_view(p.raw_data());
  const bool has_raw = ext || p.has_raw_data();
  std::vector<double> v;
  v.reserve(static_cast<size_t>(std::min<int64_t>(want_values, static_cast<int64_t>(raw.size()) + p.float_data_size() +
                                                                   p.int64_data_size() + p.int32_data_size() + p.double_data_size())));
  switch (p.data_type()) {
    case TensorProto::FLOAT:
      if (has_raw) append_raw<float>(raw, v); else for (float x : p.float_data()) v.push_back(x);
      break;
    case TensorProto::DOUBLE:
      if (has_raw) append_raw<double>(raw, v); else for (double x : p.double_data()) v.push_back(x);
      break;
    case TensorProto::INT64:
      if (has_raw) append_raw<int64_t>(raw, v); else for (auto x : p.int64_data()) v.push_back(static_cast<double>(x));
      break;
    case TensorProto::INT32:
      if (has_raw) append_raw<int32_t>(raw, v); else for (auto x : p.int32_data()) v.push_back(x);
      break;
    case TensorProto::INT8:
      if (has_raw) append_raw<int8_t>(raw, v); else for (auto x : p.int32_data()) v.push_back(static_cast<int8_t>(x));
      break;
    case TensorProto::INT16:
      if (has_raw) append_raw<int16_t>(raw, v); else for (auto x : p.int32_data()) v.push_back(static_cast<int16_t>(x));
      break;
    case TensorProto::UINT16:
      if (has_raw) append_raw<uint16_t>(raw, v); else for (auto x : p.int32_data()) v.push_back(static_cast<uint16_t>(x));
      break;
    case TensorProto::UINT32:
      if (has_raw) append_raw<uint32_t>(raw, v); else for (auto x : p.uint64_data()) v.push_back(static_cast<double>(x));
      break;
    case TensorProto::UINT64:
      if (has_raw) append_raw<uint64_t>(raw, v); else for (auto x : p.uint64_data()) v.push_back(static_cast<double>(x));
      break;
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      if (has_raw) append_raw<uint8_t>(raw, v); else for (auto x : p.int32_data()) v.push_back(x != 0 || p.data_type() == TensorProto::UINT8 ? x : 0);
      break;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: {
      auto dt = p.data_type() == TensorProto::FLOAT16 ? numerics::DType::F16 : numerics::DType::BF16;
      if (has_raw) {
        for (size_t i = 0; i + 1 < raw.size(); i += 2) {
          uint16_t b;
          std::memcpy(&b, raw.data() + i, 2);
          v.push_back(half_bits(b, dt));
        }
      } else {
        for (auto x : p.int32_data()) v.push_back(half_bits(static_cast<uint32_t>(x), dt));
      }
      break;
    }
    case 17:  // FLOAT8E4M3FN
    case 19:  // FLOAT8E5M2
    case 23: {  // FLOAT4E2M1
      const auto dt = narrow_dtype(t.type);
      const bool fp4 = p.data_type() == 23;  // two codes per byte, low nibble first
      std::vector<uint32_t> bytes;
      if (has_raw) for (unsigned char c : raw) bytes.push_back(c);
      else for (auto x : p.int32_data()) bytes.push_back(static_cast<uint32_t>(x) & 0xFF);
      const int64_t want = numel(t.shape);
      for (uint32_t b : bytes) {
        if (!fp4) { v.push_back(numerics::decode(b, dt)); continue; }
        for (uint32_t code : {b & 0xF, b >> 4})
          if (static_cast<int64_t>(v.size()) < want) v.push_back(numerics::decode(code, dt));
      }
      break;
    }
    default: break;
  }
  if (static_cast<int64_t>(v.size()) != want_values)
    throw Error(fmt::format("{}: tensor '{}' has {} values for shape {}", where, p.name(), v.size(), shape_str(t.shape)));
  t.data = std::move(v);
  return t;
}

AttrValue attr_value(const onnx::AttributeProto& a, const std::string& op, const std::string& node) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT: return static_cast<int64_t>(a.i());
    case A::FLOAT: return static_cast<double>(a.f());
    case A::STRING: return a.s();
    case A::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case A::FLOATS: return std::vector<double>(a.floats().begin(), a.floats().end());
    case A::TENSOR: return tensor_from_proto(a.t(), fmt::format("node '{}'", node), nullptr);
    default: break;
  }
  throw UnsupportedError(fmt::format("unsupported: op {} (attribute {} of type {}) at node '{}'", op, a.name(), static_cast<int>(a.type()), node));
}

// A Constant node becomes a constant tensor directly.
TensorInfo constant_value(const Node& n) {
  TensorInfo t;
  t.shape_known = true;
  // Each attribute's type is checked (a mutated file had a non-tensor `value`: bad_variant_access).
  auto malformed = [&](const char* a, const char* want) {
    return ShapeError(fmt::format("node '{}': Constant's attribute {} must be {}", n.name, a, want));
  };
  if (auto it = n.attrs.find("value"); it != n.attrs.end()) {
    const auto* v = std::get_if<TensorInfo>(&it->second);
    if (!v) throw malformed("value", "a tensor");
    t = *v;
  } else if (n.has("value_float")) {
    t.type = ElemType::Float;
    t.data = std::vector<double>{n.f("value_float", 0)};
  } else if (n.has("value_int")) {
    t.type = ElemType::Int64;
    t.data = std::vector<double>{static_cast<double>(n.i("value_int", 0))};
  } else if (n.has("value_floats")) {
    t.type = ElemType::Float;
    const auto* v = std::get_if<std::vector<double>>(&n.attrs.at("value_floats"));
    if (!v) throw malformed("value_floats", "a list of floats");
    t.data = *v;
    t.shape = {static_cast<int64_t>(t.data->size())};
  } else if (n.has("value_ints")) {
    t.type = ElemType::Int64;
    auto v = n.ints("value_ints");
    t.data = std::vector<double>(v.begin(), v.end());
    t.shape = {static_cast<int64_t>(v.size())};
  } else {
    throw UnsupportedError(fmt::format("unsupported: op Constant (no value attribute we implement) at node '{}'", n.name));
  }
  t.shape_known = true;
  return t;
}

void add_value(Graph& g, const onnx::ValueInfoProto& v, const std::string& where, bool is_input) {
  TensorInfo t;
  t.name = v.name();
  if (!v.type().has_tensor_type())
    throw UnsupportedError(fmt::format("unsupported: {} '{}' is not a tensor", where, v.name()));
  const auto& tt = v.type().tensor_type();
  t.type = elem_type(tt.elem_type(), fmt::format("{} '{}'", where, v.name()));
  if (is_input) {
    if (!tt.has_shape())
      throw UnsupportedError(fmt::format("unsupported: input '{}' has no shape (rank unknown)", v.name()));
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value() && d.dim_value() > 0) {
        t.shape.push_back(d.dim_value());
        t.dim_params.emplace_back();
      } else {
        t.shape.push_back(-1);
        t.dim_params.push_back(d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : fmt::format("{}_dim{}", v.name(), i));
      }
    }
  }
  g.tensors[t.name] = std::move(t);
}

// Takes the proto by reference to free each initializer's bytes once converted: the model's
// weights are then never held twice over (proto bytes and IR values).
Graph convert(onnx::ModelProto& m, const std::string& source, const std::filesystem::path* model_dir) {
  Graph g;
  g.name = m.graph().name().empty() ? source : m.graph().name();
  for (const auto& os : m.opset_import()) {
    if (!os.domain().empty() && os.domain() != "ai.onnx") continue;
    // The field is int64: range-checked before it narrows (2^40 + 17 was read as 17).
    if (os.version() < 0 || os.version() > 1000)
      throw UnsupportedError(fmt::format("unsupported: opset {} in '{}' (supported: {}..{})", os.version(), source, kMinOpset, kMaxKnownOpset));
    g.opset = static_cast<int>(os.version());
  }
  if (g.opset == 0) g.opset = kMaxOpset;  // very old files omit it; read as current
  if (g.opset < kMinOpset || g.opset > kMaxKnownOpset)
    throw UnsupportedError(fmt::format("unsupported: opset {} in '{}' (supported: {}..{})", g.opset, source, kMinOpset, kMaxKnownOpset));
  const auto& gp = m.graph();
  const int64_t inits = m.graph().initializer_size();
  int64_t imported = 0;
  for (auto& init : *m.mutable_graph()->mutable_initializer()) {
    g.tensors[init.name()] = tensor_from_proto(init, fmt::format("initializer of '{}'", source), model_dir);
    progress::report("import initializers", ++imported, inits);
    std::string().swap(*init.mutable_raw_data());
  }
  for (const auto& in : gp.input()) {
    if (g.tensors.count(in.name()) && g.tensors[in.name()].is_const()) continue;  // initializer listed as input
    if (std::find(g.inputs.begin(), g.inputs.end(), in.name()) != g.inputs.end())
      throw Error(fmt::format("'{}': graph input '{}' is listed twice", source, in.name()));
    add_value(g, in, "input", true);
    g.inputs.push_back(in.name());
  }
  int idx = 0;
  for (const auto& np : gp.node()) {
    Node n;
    n.name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), idx) : np.name();
    ++idx;
    if (!np.domain().empty() && np.domain() != "ai.onnx")
      throw UnsupportedError(fmt::format("unsupported: op {}.{} at node '{}'", np.domain(), np.op_type(), n.name));
    auto k = op_from_name(np.op_type());
    if (!k) throw UnsupportedError(fmt::format("unsupported: op {} at node '{}'", np.op_type(), n.name));
    n.op = *k;
    if (int v = revised_after_opset23(n.op); g.opset > kMaxOpset && v > 0 && v <= g.opset)
      throw UnsupportedError(fmt::format("unsupported: op {} version {} (opset {}; trnsim implements the ops of opsets {}..{}) at node '{}'",
                                         np.op_type(), v, g.opset, kMinOpset, kMaxOpset, n.name));
    const auto& info = op_info(n.op);
    for (const auto& a : np.attribute()) {
      bool known = false;
      for (auto name : info.attributes) known |= name == a.name();
      if (!known) throw UnsupportedError(fmt::format("unsupported: op {} (attribute {}) at node '{}'", np.op_type(), a.name(), n.name));
      n.attrs[a.name()] = attr_value(a, np.op_type(), n.name);
    }
    n.inputs.assign(np.input().begin(), np.input().end());
    while (!n.inputs.empty() && n.inputs.back().empty()) n.inputs.pop_back();
    n.outputs.assign(np.output().begin(), np.output().end());
    if (std::all_of(n.outputs.begin(), n.outputs.end(), [](const std::string& o) { return o.empty(); }))
      throw Error(fmt::format("'{}': node '{}' ({}) has no outputs", source, n.name, np.op_type()));
    // ONNX graphs are single-assignment: an output may not redefine an initializer, a graph
    // input or an earlier node's output (the redefinition silently replaced the constant).
    for (const auto& out : n.outputs)
      if (!out.empty() && g.tensors.count(out))
        throw Error(fmt::format("'{}': node '{}' writes '{}', which an initializer, input or earlier node already defines",
                                source, n.name, out));    for (const auto& in : n.inputs)
      if (!in.empty() && !g.tensors.count(in))
        throw Error(fmt::format("'{}': node '{}' reads '{}', which no earlier node or initializer defines", source, n.name, in));
    if (n.op == OpKind::Constant) {
      TensorInfo t = constant_value(n);
      t.name = n.outputs.at(0);
      g.tensors[t.name] = std::move(t);
      continue;
    }
    for (const auto& out : n.outputs) {
      if (out.empty()) continue;
      TensorInfo t;
      t.name = out;
      g.tensors[out] = std::move(t);
    }
    g.nodes.push_back(std::move(n));
  }
  for (const auto& o : gp.output()) {
    if (!g.tensors.count(o.name())) throw Error(fmt::format("'{}': output '{}' is never produced", source, o.name()));
    g.outputs.push_back(o.name());
  }
  return g;
}

}  // namespace

namespace {

onnx::ModelProto parse(const std::string& bytes, const std::string& source) {
  onnx::ModelProto m;
  if (bytes.empty() || !m.ParseFromString(bytes) || !m.has_graph())
    throw Error(fmt::format("'{}' is not a valid ONNX model (could not parse a ModelProto with a graph)", source));
  return m;
}

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& source) {
  onnx::ModelProto m = parse(bytes, source);
  return convert(m, source, nullptr);
}

Graph import_onnx_file(const std::string& path) {
  if (!std::ifstream(path, std::ios::binary)) throw Error(fmt::format("cannot open ONNX model '{}'", path));
  // Bounded: /dev/zero or a FIFO is refused at protobuf's limit for one message.
  std::string bytes = read_file_bounded(path, int64_t{2} << 30, "protobuf's limit for an ONNX model");
  onnx::ModelProto m = parse(bytes, path);
  std::string().swap(bytes);  // the proto holds the weights now: never twice over
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return convert(m, path, &dir);
}

}  // namespace trnsim::compiler
