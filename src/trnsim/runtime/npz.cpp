#include "trnsim/runtime/npz.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zip.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "trnsim/common/error.h"
#include "trnsim/common/limits.h"

namespace trnsim::runtime {

namespace {

struct DTypeInfo {
  std::string_view code;  // descr without the byte-order character
  std::string_view name;
  int bytes;
};
constexpr DTypeInfo kDTypes[] = {
    {"f4", "float32", 4}, {"f8", "float64", 8}, {"f2", "float16", 2}, {"i8", "int64", 8},
    {"i4", "int32", 4},   {"i2", "int16", 2},   {"i1", "int8", 1},    {"u1", "uint8", 1},
    {"b1", "bool", 1},
};

// IEEE binary16 to float (subnormals, infinities and NaN included).
float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? std::nanf("") : INFINITY;
  else v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

// The value of `key` in the header dict, as the text up to the next top-level ',' or '}'.
std::string_view dict_value(std::string_view header, std::string_view key, const std::string& what) {
  const std::string quoted1 = fmt::format("'{}'", key), quoted2 = fmt::format("\"{}\"", key);
  size_t k = header.find(quoted1);
  size_t klen = quoted1.size();
  if (k == std::string_view::npos) { k = header.find(quoted2); klen = quoted2.size(); }
  if (k == std::string_view::npos) throw Error(fmt::format("{}: .npy header has no '{}'", what, key));
  size_t p = header.find(':', k + klen);
  if (p == std::string_view::npos) throw Error(fmt::format("{}: .npy header: no value for '{}'", what, key));
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  int depth = 0;
  size_t e = p;
  for (; e < header.size(); ++e) {
    const char c = header[e];
    if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') --depth;
    else if ((c == ',' || c == '}') && depth == 0) break;
  }
  return header.substr(p, e - p);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\'' || s.front() == '"')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\'' || s.back() == '"')) s.remove_suffix(1);
  return s;
}

std::vector<int64_t> parse_shape(std::string_view v, const std::string& what) {
  if (v.size() < 2 || v.front() != '(' || v.back() != ')')
    throw Error(fmt::format("{}: .npy header: shape '{}' is not a tuple", what, v));
  std::vector<int64_t> shape;
  std::string_view body = v.substr(1, v.size() - 2);
  while (!body.empty()) {
    const size_t c = body.find(',');
    std::string_view item = trim(body.substr(0, c));
    if (!item.empty()) {
      int64_t d = 0;
      for (char ch : item) {
        if (ch < '0' || ch > '9' || d > (int64_t{1} << 40))
          throw Error(fmt::format("{}: .npy header: bad dimension '{}' in shape {}", what, item, v));
        d = d * 10 + (ch - '0');
      }
      shape.push_back(d);
    }
    if (c == std::string_view::npos) break;
    body.remove_prefix(c + 1);
  }
  return shape;
}

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Reads a zip archive's members; closes it on every path.
struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};

}  // namespace

bool NpyArray::integral() const { return dtype != "float32" && dtype != "float64" && dtype != "float16"; }

NpyArray parse_npy(std::string_view bytes, const std::string& what) {
  static constexpr char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    throw Error(fmt::format("{}: not a .npy array (no \\x93NUMPY magic)", what));
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = load<uint16_t>(bytes.data() + 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(fmt::format("{}: truncated .npy header", what));
    header_len = load<uint32_t>(bytes.data() + 8);
    start = 12;
  } else {
    throw Error(fmt::format("{}: .npy format version {} is not supported (1, 2 or 3)", what, major));
  }
  if (header_len > bytes.size() - start) throw Error(fmt::format("{}: truncated .npy header", what));
  const std::string_view header = bytes.substr(start, header_len);
  const std::string_view data = bytes.substr(start + header_len);

  const std::string_view descr = trim(dict_value(header, "descr", what));
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '='))
    throw Error(fmt::format("{}: unsupported dtype '{}' (expected little-endian float32, float64, float16, int64, int32, "
                            "int16, int8, uint8 or bool)", what, descr));
  const DTypeInfo* info = nullptr;
  for (const auto& d : kDTypes)
    if (descr.substr(1) == d.code) info = &d;
  if (!info)
    throw Error(fmt::format("{}: unsupported dtype '{}' (expected float32, float64, float16, int64, int32, int16, int8, "
                            "uint8 or bool)", what, descr));
  if (trim(dict_value(header, "fortran_order", what)) != "False")
    throw Error(fmt::format("{}: Fortran-order array: save it in C order (np.ascontiguousarray)", what));

  NpyArray a;
  a.dtype = std::string(info->name);
  a.shape = parse_shape(dict_value(header, "shape", what), what);
  int64_t n = 1;
  for (int64_t d : a.shape) {
    if (d != 0 && n > (int64_t{1} << 40) / d) throw Error(fmt::format("{}: shape too large", what));
    n *= d;
  }
  if (static_cast<uint64_t>(n) * info->bytes > data.size())
    throw Error(fmt::format("{}: data holds {} bytes, shape {} of {} needs {}", what, data.size(),
                            fmt::join(a.shape, "x"), a.dtype, n * info->bytes));
  check_memory(8.0 * static_cast<double>(n), fmt::format("{}: {} values of shape {}", what, n, fmt::join(a.shape, "x")));
  a.values.resize(static_cast<size_t>(n));
  const char* p = data.data();
  for (int64_t i = 0; i < n; ++i, p += info->bytes) {
    double v = 0;
    switch (info->code[0] == 'b' ? 'b' : info->code[0]) {
      case 'f':
        v = info->bytes == 4 ? load<float>(p) : info->bytes == 8 ? load<double>(p) : half_to_float(load<uint16_t>(p));
        break;
      case 'i':
        v = info->bytes == 8 ? static_cast<double>(load<int64_t>(p)) : info->bytes == 4 ? load<int32_t>(p)
            : info->bytes == 2 ? load<int16_t>(p) : load<int8_t>(p);
        break;
      case 'u': v = load<uint8_t>(p); break;
      case 'b': v = load<uint8_t>(p) != 0 ? 1.0 : 0.0; break;
    }
    a.values[static_cast<size_t>(i)] = v;
  }
  return a;
}

namespace {

// Every member of an open archive. Memory is bounded before it is spent: the members'
// announced sizes together, and then each array's decoded values, against the host memory
// limit (common/limits.h), so a zip bomb is refused from its directory, before inflating.
std::map<std::string, NpyArray> read_members(zip_t* z, const std::string& path) {
  std::map<std::string, NpyArray> out;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  std::vector<zip_stat_t> stats(static_cast<size_t>(std::max<zip_int64_t>(n, 0)));
  double announced = 0;
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t& st = stats[static_cast<size_t>(i)];
    if (zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE))
      throw Error(fmt::format("{}: cannot read member {} of the archive: {}", path, i, zip_strerror(z)));
    // Deflate expands at most ~1032x: a larger announced size is a damaged directory, refused
    // before it can ask for the memory.
    if ((st.valid & ZIP_STAT_COMP_SIZE) && st.size > 1032 * st.comp_size + 4096)
      throw Error(fmt::format("{}: member '{}': corrupt archive: {} bytes announced from {} compressed", path, st.name,
                              st.size, st.comp_size));
    announced += static_cast<double>(st.size);
  }
  check_memory(announced, fmt::format("{}: reading the archive's {} members ({} bytes uncompressed)", path, n, announced));
  double decoded = 0;  // the arrays' values (8 bytes each) so far
  for (zip_int64_t i = 0; i < n; ++i) {
    const zip_stat_t& st = stats[static_cast<size_t>(i)];
    std::string name = st.name;
    const std::string what = fmt::format("{}: member '{}'", path, name);
    if (name.size() < 4 || name.substr(name.size() - 4) != ".npy")
      throw Error(fmt::format("{}: not a .npy array (an .npz holds NAME.npy members)", what));
    std::string bytes(static_cast<size_t>(st.size), '\0');
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
    if (!f) throw Error(fmt::format("{}: cannot open: {}", what, zip_strerror(z)));
    zip_int64_t got = zip_fread(f, bytes.data(), st.size);
    // libzip checks the CRC when a read reaches the end: one more read makes it do so.
    char extra;
    if (got >= 0 && zip_fread(f, &extra, 1) < 0) got = -1;
    const std::string read_error = got < 0 ? zip_file_strerror(f) : "";
    zip_fclose(f);
    if (got < 0 || static_cast<zip_uint64_t>(got) != st.size)
      throw Error(fmt::format("{}: cannot read: {}", what, got < 0 ? read_error : "short read"));
    name.resize(name.size() - 4);
    NpyArray a = parse_npy(bytes, what);
    decoded += 8.0 * static_cast<double>(a.values.size());
    check_memory(announced + decoded, fmt::format("{}: the archive's arrays", path));
    out[name] = std::move(a);
  }
  return out;
}

[[noreturn]] void open_failed(const std::string& path, zip_error_t* ze) {
  const std::string why = zip_error_strerror(ze);
  zip_error_fini(ze);
  throw Error(fmt::format("{}: cannot read the .npz archive: {}", path, why));
}

}  // namespace

std::map<std::string, NpyArray> read_npz(const std::string& path) {
  int err = 0;
  std::unique_ptr<zip_t, ZipCloser> z(zip_open(path.c_str(), ZIP_RDONLY, &err));
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    open_failed(path, &ze);
  }
  return read_members(z.get(), path);
}

std::map<std::string, NpyArray> read_npz_bytes(std::string_view bytes, const std::string& source) {
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &ze);
  if (!src) open_failed(source, &ze);
  std::unique_ptr<zip_t, ZipCloser> z(zip_open_from_source(src, ZIP_RDONLY, &ze));
  if (!z) {
    zip_source_free(src);
    open_failed(source, &ze);
  }
  zip_error_fini(&ze);
  return read_members(z.get(), source);
}

std::map<std::string, std::vector<float>> model_inputs(const std::map<std::string, NpyArray>& arrays,
                                                       const compiler::CompiledModel& model,
                                                       const std::string& source,
                                                       const std::vector<std::string>& specialised) {
  std::map<std::string, std::vector<float>> in;
  for (const auto& name : model.inputs) {
    auto it = arrays.find(name);
    if (it == arrays.end())
      throw ShapeError(fmt::format("{}: no array '{}' (the model's inputs: {})", source, name, fmt::join(model.inputs, ", ")));
    const NpyArray& a = it->second;
    const auto& want = model.shapes.at(name);
    if (a.shape != want)
      throw ShapeError(fmt::format("{}: input '{}' has shape [{}], the program was compiled for [{}]", source, name,
                                   fmt::join(a.shape, ", "), fmt::join(want, ", ")));
    auto& v = in[name];
    v.reserve(a.values.size());
    for (double x : a.values) {
      if (a.integral() && std::fabs(x) > 16777216.0)
        throw UnsupportedError(fmt::format("unsupported: {}: input '{}' has integers beyond 2^24 (held as fp32 on the chip)", source, name));
      v.push_back(static_cast<float>(x));
    }
  }
  for (const auto& [name, a] : arrays) {
    if (in.count(name) || std::find(specialised.begin(), specialised.end(), name) != specialised.end()) continue;
    auto t = model.graph.tensors.find(name);
    if (t != model.graph.tensors.end() && t->second.is_const()) {
      if (*t->second.data != a.values)
        throw ShapeError(fmt::format("{}: array '{}' differs from the value the program was specialised on", source, name));
      continue;
    }
    throw ShapeError(fmt::format("{}: array '{}' is not an input of the model (its inputs: {})", source, name, fmt::join(model.inputs, ", ")));
  }
  return in;
}

}  // namespace trnsim::runtime
