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
#include <map>
#include <fstream>
#include <sstream>
#include <optional>
#include <string_view>

#include "trnsim/common/checked.h"
#include "trnsim/common/error.h"
#include "trnsim/common/file_read.h"
#include "trnsim/compiler/onnx_raw_data.h"
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
    case 21: return ElemType::UInt4;
    case 22: return ElemType::Int4;
    case 25: return ElemType::UInt2;
    case 26: return ElemType::Int2;
    default: break;
  }
  throw UnsupportedError(fmt::format("unsupported: element type {} ({})", t, where));
}

// Where an import's tensor bytes live: the model file (mapped) and its external-data files,
// each mapped once and shared by the constants that view it.
struct DataSources {
  const std::filesystem::path* model_dir = nullptr;  // null: a model given as bytes
  std::shared_ptr<const MappedFile> model;           // the mapped model file, if it was
  std::map<std::string, std::shared_ptr<const MappedFile>> external;
};

// A tensor's bytes stored beside the model (external data): the [offset, offset + length)
// range of its file, mapped read-only. The location must stay inside the model's folder (after
// resolving '..' and symbolic links): a model file must not make trnsim read other files.
std::pair<std::string_view, std::shared_ptr<const MappedFile>> external_data(const TensorProto& p, DataSources& src,
                                                                             const std::string& where) {
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
  const fs::path base = fs::weakly_canonical(src.model_dir->empty() ? fs::path(".") : *src.model_dir);
  const fs::path file = fs::weakly_canonical(base / fs::path(location));
  const bool inside = fs::path(location).is_relative() &&
                      std::mismatch(base.begin(), base.end(), file.begin(), file.end()).first == base.end();
  if (!inside)
    throw Error(fmt::format("{}: tensor '{}': external data location '{}' is outside the model's folder '{}' (refused)", where, p.name(),
                            location, base.string()));
  auto& map = src.external[file.string()];
  if (!map) {
    const int fd = ::open(file.c_str(), O_RDONLY);
    if (fd < 0) throw Error(fmt::format("{}: tensor '{}': cannot open its external data file '{}'", where, p.name(), file.string()));
    ::close(fd);
    map = std::make_shared<const MappedFile>(file.string(), fmt::format("{}: tensor '{}': external data", where, p.name()));
  }
  const auto size = static_cast<int64_t>(map->bytes().size());
  if (length < 0) length = size - offset;
  if (offset < 0 || length < 0 || offset > size || length > size - offset)
    throw Error(fmt::format("{}: tensor '{}': external data range [{}, {}) is outside '{}' ({} bytes)", where, p.name(), offset,
                            offset + length, file.string(), size));
  return {map->bytes().substr(static_cast<size_t>(offset), static_cast<size_t>(length)), map};
}

// The typed fields (float_data, int32_data, ...) re-encoded as the bytes of the tensor's type;
// `entries` gets how many values they hold.
std::string typed_field_bytes(const TensorProto& p, ElemType type, int64_t& entries) {
  std::string b;
  auto put = [&b](auto v) { b.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  auto each = [&](const auto& field, auto as) {
    entries = field.size();
    for (auto x : field) put(static_cast<decltype(as)>(x));
  };
  switch (type) {
    case ElemType::Float: each(p.float_data(), float{}); break;
    case ElemType::Double: each(p.double_data(), double{}); break;
    case ElemType::Int64: each(p.int64_data(), int64_t{}); break;
    case ElemType::Int32: each(p.int32_data(), int32_t{}); break;
    case ElemType::Int16: each(p.int32_data(), int16_t{}); break;
    case ElemType::Int8: each(p.int32_data(), int8_t{}); break;
    case ElemType::UInt16: case ElemType::Float16: case ElemType::BFloat16: each(p.int32_data(), uint16_t{}); break;
    case ElemType::UInt32: each(p.uint64_data(), uint32_t{}); break;
    case ElemType::UInt64: each(p.uint64_data(), uint64_t{}); break;
    case ElemType::Float4E2M1: each(p.int32_data(), uint8_t{}); entries *= 2; break;  // two codes per byte
    default: each(p.int32_data(), uint8_t{}); break;  // UInt8, Bool, fp8
  }
  return b;
}

// `src`: where external data and the mapped model's raw bytes are; `mapped_raw`: this
// tensor's raw_data as located in the mapped model file (onnx_raw_data.h). The values stay in
// the tensor's own type (ConstData): viewed in a mapped file, or owned.
TensorInfo tensor_from_proto(const TensorProto& p, const std::string& where, DataSources* src,
                             std::optional<std::string_view> mapped_raw = std::nullopt) {
  TensorInfo t;
  t.name = p.name();
  t.type = elem_type(p.data_type(), where);
  if (sub_byte_int_bits(t.type))  // graph values and Cast targets only: their packed constants are not decoded
    throw UnsupportedError(fmt::format("unsupported: {} constant '{}' ({})", elem_name(t.type), p.name(), where));
  for (auto d : p.dims()) t.shape.push_back(d);
  t.shape_known = true;
  // Checked (negative dims, overflow) before anything is sized from the shape; the values are
  // then sized from the data the file holds, never from the shape it claims.
  const int64_t want = checked_numel(t.shape, fmt::format("{}: tensor '{}'", where, p.name()));
  const int64_t want_bytes = encoded_bytes(t.type, want);
  std::string_view raw;
  std::shared_ptr<const void> owner;
  std::string owned;
  bool typed = false;
  int64_t have = 0;  // values the data holds
  if (p.data_location() == TensorProto::EXTERNAL) {
    if (!src || !src->model_dir)
      throw UnsupportedError(fmt::format("unsupported: external tensor data for '{}' ({}) in a model given as bytes: load the model "
                                         "from its file, next to its data", p.name(), where));
    std::tie(raw, owner) = external_data(p, *src, where);
  } else if (mapped_raw) {
    raw = *mapped_raw;
    owner = src->model;
  } else if (p.has_raw_data()) {
    raw = p.raw_data();
  } else {
    typed = true;
    owned = typed_field_bytes(p, t.type, have);
    raw = owned;
  }
  if (t.type == ElemType::Float4E2M1) have = std::min<int64_t>(typed ? have : 2 * static_cast<int64_t>(raw.size()), want);
  else if (!typed) have = static_cast<int64_t>(raw.size()) / encoded_bytes(t.type, 1);  // whole elements
  if (have != want) throw Error(fmt::format("{}: tensor '{}' has {} values for shape {}", where, p.name(), have, shape_str(t.shape)));
  raw = raw.substr(0, static_cast<size_t>(want_bytes));
  if (owner) t.data = ConstData::encoded(t.type, want, raw, std::move(owner));
  else t.data = ConstData::owned(t.type, want, std::string(raw));
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
    // If/Loop sub-graphs travel as their serialized GraphProto; ops/control_flow.cpp inlines
    // them (inline_subgraph) once their condition or trip count is known.
    case A::GRAPH: return a.g().SerializeAsString();
    case A::STRINGS: {  // joined with ',' (names such as RNN activations; the unit splits them)
      std::string s;
      for (const auto& x : a.strings()) s += (s.empty() ? "" : ",") + x;
      return s;
    }
    default: break;
  }
  throw UnsupportedError(fmt::format("unsupported: op {} (attribute {} of type {}) at node '{}'", op, a.name(), static_cast<int>(a.type()), node));
}

// One node: its op (the table's), its attributes (each one the op's row implements), inputs
// and outputs as named in the file.
Node import_node(const onnx::NodeProto& np, int idx, int opset, const std::string& source) {
  Node n;
  n.name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), idx) : np.name();
  if (!np.domain().empty() && np.domain() != "ai.onnx")
    throw UnsupportedError(fmt::format("unsupported: op {}.{} at node '{}'", np.domain(), np.op_type(), n.name));
  auto k = op_from_name(np.op_type());
  if (!k) throw UnsupportedError(fmt::format("unsupported: op {} at node '{}'", np.op_type(), n.name));
  n.op = *k;
  if (int v = revised_after_opset23(n.op); opset > kMaxOpset && v > 0 && v <= opset)
    throw UnsupportedError(fmt::format("unsupported: op {} version {} (opset {}; trnsim implements the ops of opsets {}..{}) at node '{}'",
                                       np.op_type(), v, opset, kMinOpset, kMaxOpset, n.name));
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
  return n;
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

// A Constant node becomes a constant tensor; any other node declares its outputs and joins `into`.
void add_node(Graph& g, Node n, std::vector<Node>& into) {
  if (n.op == OpKind::Constant) {
    TensorInfo t = constant_value(n);
    t.name = n.outputs.at(0);
    g.tensors[t.name] = std::move(t);
    return;
  }
  for (const auto& out : n.outputs) {
    if (out.empty()) continue;
    TensorInfo t;
    t.name = out;
    g.tensors[out] = std::move(t);
  }
  into.push_back(std::move(n));
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

// `raw`: the initialisers' raw_data located in the mapped model file, in order (empty when the
// model was parsed whole: the proto's own bytes are then copied, once, into the constants).
Graph convert(const onnx::ModelProto& m, const std::string& source, DataSources& src,
              const std::vector<std::optional<std::string_view>>& raw = {}) {
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
  for (int k = 0; k < gp.initializer_size(); ++k) {
    const auto& init = gp.initializer(k);
    const auto mapped = static_cast<size_t>(k) < raw.size() ? raw[static_cast<size_t>(k)] : std::nullopt;
    g.tensors[init.name()] = tensor_from_proto(init, fmt::format("initializer of '{}'", source), &src, mapped);
    progress::report("import initializers", k + 1, gp.initializer_size());
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
    Node n = import_node(np, idx++, g.opset, source);
    // ONNX graphs are single-assignment: an output may not redefine an initializer, a graph
    // input or an earlier node's output (the redefinition silently replaced the constant).
    for (const auto& out : n.outputs)
      if (!out.empty() && g.tensors.count(out))
        throw Error(fmt::format("'{}': node '{}' writes '{}', which an initializer, input or earlier node already defines",
                                source, n.name, out));    for (const auto& in : n.inputs)
      if (!in.empty() && !g.tensors.count(in))
        throw Error(fmt::format("'{}': node '{}' reads '{}', which no earlier node or initializer defines", source, n.name, in));
    add_node(g, std::move(n), g.nodes);
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
  DataSources src;
  return convert(m, source, src);
}

Graph import_onnx_file(const std::string& path) {
  if (!std::ifstream(path, std::ios::binary)) throw Error(fmt::format("cannot open ONNX model '{}'", path));
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  DataSources src;
  src.model_dir = &dir;
  constexpr int64_t kProtobufLimit = int64_t{2} << 30;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && std::filesystem::is_regular_file(path, ec) && size <= static_cast<uint64_t>(kProtobufLimit)) {
    // Mapped, and parsed without its weights' bytes, which the constants view in the mapping.
    auto map = std::make_shared<const MappedFile>(path, "ONNX model");
    if (auto stripped = strip_initializer_data(map->bytes())) {
      onnx::ModelProto m = parse(stripped->model, path);
      if (m.graph().initializer_size() == static_cast<int>(stripped->raw.size())) {
        src.model = map;
        return convert(m, path, src, stripped->raw);
      }
    }
  }
  // Bounded: /dev/zero or a FIFO is refused at protobuf's limit for one message.
  std::string bytes = read_file_bounded(path, kProtobufLimit, "protobuf's limit for an ONNX model");
  onnx::ModelProto m = parse(bytes, path);
  std::string().swap(bytes);
  return convert(m, path, src);
}

Subgraph inline_subgraph(Graph& g, const std::string& graph_proto, const std::string& prefix, const std::vector<std::string>& bind) {
  onnx::GraphProto gp;
  if (!gp.ParseFromString(graph_proto)) throw Error(fmt::format("sub-graph '{}' is not a valid GraphProto", prefix));
  if (static_cast<size_t>(gp.input_size()) != bind.size())
    throw ShapeError(fmt::format("sub-graph '{}' declares {} inputs, the node gives {}", prefix, gp.input_size(), bind.size()));
  std::map<std::string, std::string> names;  // the sub-graph's names -> the graph's
  for (int i = 0; i < gp.input_size(); ++i) names[gp.input(i).name()] = bind[static_cast<size_t>(i)];
  auto define = [&](const std::string& n) {
    std::string to = prefix + n;
    if (g.tensors.count(to)) to = g.fresh(to);
    return names[n] = to;
  };
  auto read = [&](const std::string& n) {
    auto it = names.find(n);
    const std::string r = it != names.end() ? it->second : n;
    if (!n.empty() && !g.tensors.count(r)) throw Error(fmt::format("sub-graph '{}' reads '{}', which nothing defines", prefix, n));
    return r;
  };
  for (const auto& init : gp.initializer()) {
    TensorInfo t = tensor_from_proto(init, fmt::format("initializer of sub-graph '{}'", prefix), nullptr);
    t.name = define(init.name());
    g.tensors[t.name] = std::move(t);
  }
  Subgraph s;
  int idx = 0;
  for (const auto& np : gp.node()) {
    Node n = import_node(np, idx++, g.opset, prefix);
    n.name = prefix + n.name;
    for (auto& in : n.inputs) in = read(in);
    for (auto& out : n.outputs) if (!out.empty()) out = define(out);
    add_node(g, std::move(n), s.nodes);
  }
  for (const auto& o : gp.output()) s.outputs.push_back(read(o.name()));
  return s;
}

}  // namespace trnsim::compiler
