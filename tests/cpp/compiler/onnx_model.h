// Building small ONNX models in C++ through the protobuf API, for the compiler and runtime
// tests (no Python in the loop).
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace trnsim::testing {

class OnnxModel {
 public:
  explicit OnnxModel(int opset = 17) {
    m_.set_ir_version(9);
    auto* o = m_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m_.mutable_graph()->set_name("test");
  }
  // An input of float (or another elem type); a negative size is a symbolic axis "N".
  OnnxModel& input(const std::string& name, std::vector<int64_t> shape, int type = onnx::TensorProto::FLOAT) {
    auto* v = m_.mutable_graph()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* s = t->mutable_shape();
    for (auto d : shape) {
      if (d < 0) s->add_dim()->set_dim_param("N");
      else s->add_dim()->set_dim_value(d);
    }
    return *this;
  }
  OnnxModel& output(const std::string& name) {
    auto* v = m_.mutable_graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    return *this;
  }
  OnnxModel& floats(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : shape) t->add_dims(d);
    for (float x : v) t->add_float_data(x);
    return *this;
  }
  OnnxModel& ints(const std::string& name, std::vector<int64_t> shape, const std::vector<int64_t>& v) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (auto d : shape) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t)));
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                        const std::string& name = "") {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return *n;
  }
  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  std::string bytes() const { return m_.SerializeAsString(); }

 private:
  onnx::ModelProto m_;
};

// Deterministic values in [-1, 1).
inline std::vector<float> values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

}  // namespace trnsim::testing
