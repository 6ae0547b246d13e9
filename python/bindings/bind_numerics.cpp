// Python bindings of the numerics layer: trnsim._core.numerics. Arrays come in as contiguous
// CPU ndarrays (python/trnsim/numerics.py converts array-likes) and go out as new numpy arrays.
// MX blocks run along the last axis of an array, so each row has its own scales.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "registry.h"
#include "trnsim/common/error.h"
#include "trnsim/numerics/convert.h"
#include "trnsim/numerics/dtype.h"
#include "trnsim/numerics/sparsity.h"

namespace nb = nanobind;
using namespace trnsim::numerics;

namespace {

template <class T>
using In = nb::ndarray<const T, nb::c_contig, nb::device::cpu>;
template <class T>
using Out = nb::ndarray<nb::numpy, T>;
using Shape = std::vector<size_t>;

template <class T>
Out<T> new_array(const Shape& shape) {
  size_t n = 1;
  for (size_t s : shape) n *= s;
  T* data = new T[n ? n : 1];
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return Out<T>(data, shape.size(), shape.data(), owner);
}

template <class A>
Shape shape_of(const A& a) {
  Shape s(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) s[i] = a.shape(i);
  return s;
}

// (rows, cols) of an array seen as rows along its last axis; a 0-d array is one element.
std::pair<size_t, size_t> rows_cols(const Shape& s) {
  if (s.empty()) return {1, 1};
  size_t rows = 1;
  for (size_t i = 0; i + 1 < s.size(); ++i) rows *= s[i];
  return {rows, s.back()};
}

Rounding parse_rounding(const std::string& s) {
  if (s == "rne" || s == "nearest_even") return Rounding::NearestEven;
  if (s == "stochastic" || s == "sr") return Rounding::Stochastic;
  throw trnsim::UnsupportedError("unknown rounding '" + s + "': expected 'rne' or 'stochastic'");
}

Overflow parse_overflow(const std::string& s) {
  if (s == "default") return Overflow::Default;
  if (s == "saturate") return Overflow::Saturate;
  throw trnsim::UnsupportedError("unknown overflow mode '" + s +
                                 "': expected 'default' or 'saturate'");
}

ConvertOptions options(const std::string& rounding, uint64_t seed, const std::string& overflow,
                       uint64_t offset) {
  return ConvertOptions{parse_rounding(rounding), parse_overflow(overflow), seed, offset};
}

template <class Bits>
nb::object encode_as(In<float> x, DType t, const ConvertOptions& opt) {
  auto out = new_array<Bits>(shape_of(x));
  {
    nb::gil_scoped_release nogil;
    encode(std::span<const float>(x.data(), x.size()), t, std::span<Bits>(out.data(), x.size()),
           opt);
  }
  return nb::cast(out);
}

nb::object py_encode(In<float> x, const std::string& dtype, const std::string& rounding,
                     uint64_t seed, const std::string& overflow, uint64_t offset) {
  const DType t = dtype_from_string(dtype);
  const ConvertOptions opt = options(rounding, seed, overflow, offset);
  if (is_block_format(t))
    throw trnsim::UnsupportedError("encode: " + dtype +
                                   " is a block format; use mx_quantize (or quantize)");
  const int bits = info(t).bits;
  if (bits == 32) return encode_as<uint32_t>(x, t, opt);
  if (bits == 16) return encode_as<uint16_t>(x, t, opt);
  return encode_as<uint8_t>(x, t, opt);
}

template <class Bits>
Out<float> py_decode(In<Bits> bits, const std::string& dtype) {
  const DType t = dtype_from_string(dtype);
  auto out = new_array<float>(shape_of(bits));
  nb::gil_scoped_release nogil;
  decode(std::span<const Bits>(bits.data(), bits.size()), t,
         std::span<float>(out.data(), bits.size()));
  return out;
}

Out<float> py_quantize(In<float> x, const std::string& dtype, const std::string& rounding,
                       uint64_t seed, const std::string& overflow, uint64_t offset) {
  const DType t = dtype_from_string(dtype);
  ConvertOptions opt = options(rounding, seed, overflow, offset);
  const Shape shape = shape_of(x);
  auto out = new_array<float>(shape);
  nb::gil_scoped_release nogil;
  std::copy(x.data(), x.data() + x.size(), out.data());
  // Block formats: one quantize call per row, so blocks never straddle rows; element i keeps
  // counter offset + i either way.
  const auto [rows, cols] =
      is_block_format(t) ? rows_cols(shape) : std::pair<size_t, size_t>{1, x.size()};
  for (size_t r = 0; r < rows; ++r) {
    opt.offset = offset + r * cols;
    quantize(std::span<float>(out.data() + r * cols, cols), t, opt);
  }
  return out;
}

std::pair<Out<uint8_t>, Out<uint8_t>> py_mx_quantize(In<float> x, const std::string& fmt,
                                                     const std::string& rounding, uint64_t seed,
                                                     uint64_t offset) {
  const DType t = dtype_from_string(fmt);
  ConvertOptions opt = options(rounding, seed, "default", offset);
  const Shape shape = shape_of(x);
  const auto [rows, cols] = rows_cols(shape);
  const size_t block = static_cast<size_t>(info(t).block_size);
  const size_t nb_row = (cols + block - 1) / block;
  Shape sshape = shape.empty() ? Shape{1} : shape;
  sshape.back() = nb_row;
  auto elems = new_array<uint8_t>(shape);
  auto scales = new_array<uint8_t>(sshape);
  {
    nb::gil_scoped_release nogil;
    for (size_t r = 0; r < rows; ++r) {
      opt.offset = offset + r * cols;
      mx_quantize(std::span<const float>(x.data() + r * cols, cols), t,
                  std::span<uint8_t>(elems.data() + r * cols, cols),
                  std::span<uint8_t>(scales.data() + r * nb_row, nb_row), opt);
    }
  }
  return {elems, scales};
}

Out<float> py_mx_dequantize(In<uint8_t> elems, In<uint8_t> scales, const std::string& fmt) {
  const DType t = dtype_from_string(fmt);
  const Shape shape = shape_of(elems);
  const auto [rows, cols] = rows_cols(shape);
  const size_t block = static_cast<size_t>(info(t).block_size);
  const size_t nb_row = (cols + block - 1) / block;
  Shape want = shape.empty() ? Shape{1} : shape;
  want.back() = nb_row;
  if (shape_of(scales) != want && !(shape.empty() && scales.size() == 1))
    throw trnsim::ShapeError("mx_dequantize: elements of shape " + std::to_string(rows) + "x" +
                             std::to_string(cols) + " need " + std::to_string(nb_row) +
                             " scales per row (blocks of " + std::to_string(block) +
                             " along the last axis), got " + std::to_string(scales.size()) +
                             " scales in total");
  auto out = new_array<float>(shape);
  nb::gil_scoped_release nogil;
  for (size_t r = 0; r < rows; ++r)
    mx_dequantize(std::span<const uint8_t>(elems.data() + r * cols, cols),
                  std::span<const uint8_t>(scales.data() + r * nb_row, nb_row), t,
                  std::span<float>(out.data() + r * cols, cols));
  return out;
}

std::pair<Out<float>, Out<uint8_t>> py_sparse_pack(In<float> x, int keep, int group) {
  if (x.ndim() != 2)
    throw trnsim::ShapeError("sparse_pack: expected a 2-D array (rows, cols), got " +
                             std::to_string(x.ndim()) + " dimensions");
  const size_t rows = x.shape(0), cols = x.shape(1);
  const SparsePattern p{keep, group};
  const size_t kept = (group > 0 && keep > 0) ? cols / group * keep : 0;
  auto values = new_array<float>({rows, kept});
  auto indices = new_array<uint8_t>({rows, kept});
  nb::gil_scoped_release nogil;
  sparse_pack(std::span<const float>(x.data(), x.size()), rows, cols,
              std::span<float>(values.data(), rows * kept),
              std::span<uint8_t>(indices.data(), rows * kept), p);
  return {values, indices};
}

Out<float> py_sparse_unpack(In<float> values, In<uint8_t> indices, size_t cols, int keep,
                            int group) {
  if (values.ndim() != 2 || indices.ndim() != 2 || values.shape(0) != indices.shape(0) ||
      values.shape(1) != indices.shape(1))
    throw trnsim::ShapeError("sparse_unpack: values and indices must be 2-D arrays of the same "
                             "shape (rows, cols / group * keep)");
  const size_t rows = values.shape(0);
  auto out = new_array<float>({rows, cols});
  nb::gil_scoped_release nogil;
  sparse_unpack(std::span<const float>(values.data(), values.size()),
                std::span<const uint8_t>(indices.data(), indices.size()), rows, cols,
                std::span<float>(out.data(), rows * cols), SparsePattern{keep, group});
  return out;
}

nb::dict info_dict(const DTypeInfo& d) {
  nb::dict r;
  r["name"] = std::string(d.name);
  r["bits"] = d.bits;
  r["is_float"] = d.is_float;
  r["exponent_bits"] = d.exponent_bits;
  r["mantissa_bits"] = d.mantissa_bits;
  r["exponent_bias"] = d.exponent_bias;
  r["has_sign"] = d.has_sign;
  r["has_inf"] = d.has_inf;
  r["has_nan"] = d.has_nan;
  r["max_finite"] = d.max_finite;
  r["min_normal"] = d.min_normal;
  r["min_subnormal"] = d.min_subnormal;
  r["block_size"] = d.block_size;
  r["element"] = std::string(name(d.element));
  r["scale"] = std::string(name(d.scale));
  // Average over a full block: fp4 is half a byte, an MX element also carries 1/32 of a scale.
  r["storage_bytes_per_element"] = d.bits / 8.0 + (d.block_size > 1 ? 1.0 / d.block_size : 0.0);
  return r;
}

void bind(nb::module_& parent) {
  using namespace nb::literals;
  nb::module_ m = parent.def_submodule("numerics", "dtype table and conversions");
  m.def("dtypes", [] {
    nb::list out;
    for (DType t : all_dtypes()) out.append(info_dict(info(t)));
    return out;
  });
  m.def("dtype_info", [](const std::string& s) { return info_dict(info(dtype_from_string(s))); });
  m.def("storage_bytes", [](const std::string& s, double n) {
    return storage_bytes(dtype_from_string(s), n);
  });
  m.def("encode", &py_encode, "x"_a, "dtype"_a, "rounding"_a = "rne", "seed"_a = 0,
        "overflow"_a = "default", "offset"_a = 0);
  m.def("decode", &py_decode<uint8_t>, "bits"_a, "dtype"_a);
  m.def("decode", &py_decode<uint16_t>, "bits"_a, "dtype"_a);
  m.def("decode", &py_decode<uint32_t>, "bits"_a, "dtype"_a);
  m.def("quantize", &py_quantize, "x"_a, "dtype"_a, "rounding"_a = "rne", "seed"_a = 0,
        "overflow"_a = "default", "offset"_a = 0);
  m.def("mx_quantize", &py_mx_quantize, "x"_a, "fmt"_a, "rounding"_a = "rne", "seed"_a = 0,
        "offset"_a = 0);
  m.def("mx_dequantize", &py_mx_dequantize, "elements"_a, "scales"_a, "fmt"_a);
  m.def("sparse_pack", &py_sparse_pack, "x"_a, "keep"_a = 4, "group"_a = 16);
  m.def("sparse_unpack", &py_sparse_unpack, "values"_a, "indices"_a, "cols"_a, "keep"_a = 4,
        "group"_a = 16);
}

trnsim::bindings::Register reg{10, bind};

}  // namespace
