// A structure-aware mutator for the ONNX target (fuzz_onnx_structured): libFuzzer's byte
// mutations mostly break the protobuf framing, so most inputs stop in the parser. This one
// parses the model, changes one thing an attacker or a careless exporter would (an op type, an
// attribute, a dim, a rank, an initializer's dims or values, an edge, the opset) to a value at
// the edge of its range, and writes it back; inputs that do not parse get byte mutations.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Rng = std::mt19937_64;

const char* const kOps[] = {
    "Abs", "Add", "ArgMax", "ArgMin", "AveragePool", "BatchNormalization", "Cast", "CastLike", "Celu", "Clip",
    "Concat", "Constant", "ConstantOfShape", "Conv", "ConvTranspose", "CumSum", "Div", "Einsum", "Elu", "Equal",
    "Expand", "Flatten", "GRU", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool",
    "GroupNormalization", "HardSigmoid", "Identity", "If", "InstanceNormalization", "LRN", "LSTM",
    "LayerNormalization", "LogSoftmax", "Loop", "MatMul", "Max", "MaxPool", "Mean", "Min", "Mod", "NonZero",
    "OneHot", "PRelu", "Pad", "Pow", "RNN", "Range", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum", "Relu",
    "Reshape", "Resize", "ScatterElements", "ScatterND", "Selu", "Shape", "Size", "Slice", "Softmax", "Split",
    "Squeeze", "Sum", "Tile", "TopK", "Transpose", "Trilu", "Unsqueeze", "Where", "Hardmax", "Compress"};
const char* const kAttrs[] = {"axis", "axes", "perm", "kernel_shape", "pads", "strides", "dilations", "group", "k",
                              "keepdims", "split", "num_outputs", "batch_dims", "to", "epsilon", "alpha", "value",
                              "starts", "ends", "shape", "hidden_size", "direction", "mode", "upper", "output_padding"};

int64_t interesting(Rng& r) {
  static const int64_t v[] = {0, 1, -1, 2, 3, -2, 7, 64, 4096, 65536, (int64_t{1} << 31) - 1, int64_t{1} << 31,
                              int64_t{1} << 32, int64_t{1} << 40, int64_t{1} << 62, std::numeric_limits<int64_t>::max(),
                              std::numeric_limits<int64_t>::min(), -(int64_t{1} << 31)};
  return v[r() % std::size(v)];
}

float interesting_float(Rng& r) {
  static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, NAN, INFINITY, -INFINITY, 1e38f, 1e-45f, 16777217.0f, 0.5f};
  return v[r() % std::size(v)];
}

template <class T>
T& pick(google::protobuf::RepeatedPtrField<T>* f, Rng& r) { return *f->Mutable(static_cast<int>(r() % f->size())); }

void mutate_dims(onnx::TensorShapeProto* s, Rng& r) {
  switch (r() % 4) {
    case 0: s->clear_dim(); break;  // rank 0
    case 1: s->add_dim()->set_dim_value(interesting(r)); break;
    case 2: if (s->dim_size()) pick(s->mutable_dim(), r).set_dim_value(interesting(r)); break;
    default: if (s->dim_size()) pick(s->mutable_dim(), r).set_dim_param("N"); break;
  }
}

void mutate_attribute(onnx::NodeProto& n, Rng& r) {
  onnx::AttributeProto* a;
  if (n.attribute_size() == 0 || r() % 3 == 0) {
    a = n.add_attribute();
    a->set_name(kAttrs[r() % std::size(kAttrs)]);
    a->set_type(r() % 2 ? onnx::AttributeProto::INT : onnx::AttributeProto::INTS);
  } else {
    a = &pick(n.mutable_attribute(), r);
  }
  switch (r() % 6) {
    case 0: a->set_i(interesting(r)); break;
    case 1: if (a->ints_size()) a->set_ints(static_cast<int>(r() % a->ints_size()), interesting(r)); else a->add_ints(interesting(r)); break;
    case 2: a->add_ints(interesting(r)); break;
    case 3: a->clear_ints(); break;
    case 4: a->set_f(interesting_float(r)); break;
    default: a->set_type(static_cast<onnx::AttributeProto::AttributeType>(r() % 15)); break;
  }
}

void mutate_initializer(onnx::GraphProto& g, Rng& r) {
  auto& t = pick(g.mutable_initializer(), r);
  switch (r() % 6) {
    case 0: t.clear_dims(); break;
    case 1: if (t.dims_size()) t.set_dims(static_cast<int>(r() % t.dims_size()), interesting(r)); else t.add_dims(interesting(r)); break;
    case 2: t.add_dims(interesting(r)); break;
    case 3: t.set_data_type(static_cast<int32_t>(r() % 24)); break;
    case 4: if (t.int64_data_size()) t.set_int64_data(static_cast<int>(r() % t.int64_data_size()), interesting(r));
            else t.add_int64_data(interesting(r)); break;
    default: if (t.float_data_size()) t.set_float_data(static_cast<int>(r() % t.float_data_size()), interesting_float(r));
             else t.add_float_data(interesting_float(r)); break;
  }
}

void mutate_edges(onnx::GraphProto& g, onnx::NodeProto& n, Rng& r) {
  // Another tensor of the graph as an input (a cycle, a type clash, a missing name), or one
  // input fewer or more.
  std::string other = g.input_size() ? pick(g.mutable_input(), r).name() : "x";
  if (g.node_size() > 1 && r() % 2) {
    auto& m = pick(g.mutable_node(), r);
    if (m.output_size()) other = m.output(static_cast<int>(r() % m.output_size()));
  }
  switch (r() % 4) {
    case 0: if (n.input_size()) n.set_input(static_cast<int>(r() % n.input_size()), other); break;
    case 1: n.add_input(r() % 4 ? other : ""); break;
    case 2: if (n.input_size()) n.mutable_input()->RemoveLast(); break;
    default: n.add_output(other); break;
  }
}

void mutate(onnx::ModelProto& m, Rng& r) {
  onnx::GraphProto& g = *m.mutable_graph();
  onnx::NodeProto& n = pick(g.mutable_node(), r);
  switch (r() % 9) {
    case 0: n.set_op_type(kOps[r() % std::size(kOps)]); break;
    case 1: case 2: mutate_attribute(n, r); break;
    case 3: if (g.input_size()) mutate_dims(pick(g.mutable_input(), r).mutable_type()->mutable_tensor_type()->mutable_shape(), r); break;
    case 4: if (g.initializer_size()) mutate_initializer(g, r); break;
    case 5: mutate_edges(g, n, r); break;
    case 6: if (g.input_size()) pick(g.mutable_input(), r).mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(r() % 24)); break;
    case 7: *g.add_node() = n; break;  // a duplicate: the same outputs assigned twice
    default: if (m.opset_import_size()) pick(m.mutable_opset_import(), r).set_version(r() % 2 ? interesting(r) : static_cast<int64_t>(r() % 24)); break;
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Rng r(seed);
  onnx::ModelProto m;
  if (r() % 4 == 0 || !m.ParseFromArray(data, static_cast<int>(size)) || m.graph().node_size() == 0)
    return LLVMFuzzerMutate(data, size, max_size);
  for (int k = 1 + static_cast<int>(r() % 3); k > 0; --k) mutate(m, r);
  std::string out;
  if (!m.SerializeToString(&out) || out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
