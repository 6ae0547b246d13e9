// ConstData (constants in their own type) and the importer's raw-data stripping: values
// decoded from each encoding equal the numpy-style reference values, packing keeps only exact
// encodings, shape-only constants refuse reads, and a model parsed from its stripped bytes plus
// the located raw data gives the same constants as the whole model.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>

#include "trnsim/common/error.h"
#include "trnsim/compiler/const_data.h"
#include "trnsim/compiler/onnx_import.h"
#include "trnsim/compiler/onnx_raw_data.h"

namespace trnsim::compiler {
namespace {

template <typename T>
std::string bytes_of(const std::vector<T>& v) {
  std::string b(v.size() * sizeof(T), '\0');
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(ConstData, DecodesEachEncoding) {
  const auto f = ConstData::owned(ElemType::Float, 3, bytes_of<float>({1.5f, -2.25f, 3e-8f}));
  EXPECT_EQ(f.values(), (std::vector<double>{1.5, -2.25, static_cast<double>(3e-8f)}));
  EXPECT_EQ(f.floats(), (std::vector<float>{1.5f, -2.25f, 3e-8f}));
  const auto i = ConstData::owned(ElemType::Int64, 2, bytes_of<int64_t>({-7, int64_t{1} << 40}));
  EXPECT_EQ(i[0], -7.0);
  EXPECT_EQ(i[1], std::ldexp(1.0, 40));
  // bf16 0x3FC0 = 1.5, 0xC000 = -2; fp4 e2m1 codes 0x2 = 1.0 (low nibble first), 0xF = -6.
  const auto h = ConstData::owned(ElemType::BFloat16, 2, bytes_of<uint16_t>({0x3FC0, 0xC000}));
  EXPECT_EQ(h.values(), (std::vector<double>{1.5, -2.0}));
  const auto q = ConstData::owned(ElemType::Float4E2M1, 3, std::string("\xF2\x02", 2));
  EXPECT_EQ(q.values(), (std::vector<double>{1.0, -6.0, 1.0}));
  EXPECT_EQ(f.host_bytes(), 12);
  EXPECT_EQ(q.host_bytes(), 2);
}

TEST(ConstData, PacksOnlyExactLargeValues) {
  std::vector<double> v(5000);
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(0.1 * static_cast<double>(k));
  const auto p = ConstData::packed(ElemType::Float, v);
  EXPECT_TRUE(p.is_encoded());
  EXPECT_EQ(p.host_bytes(), 4 * 5000);
  EXPECT_EQ(p.values(), v);  // bit for bit
  v[7] = 0.1;  // not an fp32 value: kept as doubles
  EXPECT_FALSE(ConstData::packed(ElemType::Float, v).is_encoded());
  EXPECT_FALSE(ConstData::packed(ElemType::Float, {1.0, 2.0}).is_encoded());  // small: decoded
  std::vector<double> big(5000, 3e9);  // beyond int32: decoded, never wrapped
  EXPECT_FALSE(ConstData::packed(ElemType::Int32, big).is_encoded());
}

TEST(ConstData, ShapeOnlyRefusesReads) {
  const auto s = ConstData::shape_only(ElemType::BFloat16, 1 << 20);
  EXPECT_FALSE(s.loaded());
  EXPECT_EQ(s.size(), size_t{1} << 20);
  EXPECT_EQ(s.host_bytes(), 0);
  EXPECT_THROW(s[0], Error);
  EXPECT_THROW(s.floats(), Error);
}

// A model with a raw-data initialiser and a typed-field one, parsed whole and stripped.
TEST(OnnxRawData, StrippedModelKeepsTheConstants) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(2);
  w->set_raw_data(bytes_of<float>({1, 2, 3, 4}));
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::INT64);
  b->add_dims(2);
  b->add_int64_data(5);
  b->add_int64_data(-6);
  auto* n = g->add_node();
  n->set_op_type("MatMul");
  n->add_input("x");
  n->add_input("w");
  n->add_output("y");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int d : {1, 2}) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("y");
  const std::string bytes = m.SerializeAsString();
  const auto s = strip_initializer_data(bytes);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->raw.size(), 2u);
  ASSERT_TRUE(s->raw[0].has_value());
  EXPECT_FALSE(s->raw[1].has_value());
  EXPECT_EQ(*s->raw[0], w->raw_data());
  EXPECT_LT(s->model.size(), bytes.size());
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(s->model));
  EXPECT_FALSE(back.graph().initializer(0).has_raw_data());
  EXPECT_EQ(back.graph().initializer(1).int64_data_size(), 2);
  const Graph whole = import_onnx_bytes(bytes);
  EXPECT_EQ(whole.tensor("w").data->values(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(whole.tensor("b").data->values(), (std::vector<double>{5, -6}));
  EXPECT_FALSE(strip_initializer_data(std::string("\x0a\xff", 2)).has_value());  // a length past the end
}

}  // namespace
}  // namespace trnsim::compiler
