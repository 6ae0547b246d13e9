#include "trnsim/compiler/onnx_raw_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim::compiler {

MappedFile::MappedFile(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error(fmt::format("{}: cannot open '{}'", what, path));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(fmt::format("{}: '{}' is not a regular file", what, path));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map_ == MAP_FAILED) {
      map_ = nullptr;
      ::close(fd);
      throw Error(fmt::format("{}: cannot map '{}'", what, path));
    }
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (map_) ::munmap(map_, size_);
}

namespace {

// Protobuf wire format: ModelProto.graph = 7, GraphProto.initializer = 5, TensorProto.raw_data
// = 9 (onnx.proto3); all three length-delimited.
constexpr uint64_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
constexpr uint64_t kLengthDelimited = 2;

struct Malformed {};

class Walker {
 public:
  explicit Walker(std::string_view b) : b_(b) {}
  bool done() const { return pos_ >= b_.size(); }
  size_t pos() const { return pos_; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) throw Malformed{};
      const auto c = static_cast<uint8_t>(b_[pos_++]);
      v |= static_cast<uint64_t>(c & 0x7F) << shift;
      if (!(c & 0x80)) return v;
    }
    throw Malformed{};
  }
  // Skips a field's payload of wire type `wt`; returns [begin, end) of a length-delimited one.
  std::pair<size_t, size_t> payload(uint64_t wt) {
    size_t n = 0;
    switch (wt) {
      case 0: varint(); return {pos_, pos_};
      case 1: n = 8; break;
      case 5: n = 4; break;
      case kLengthDelimited: n = static_cast<size_t>(varint()); break;
      default: throw Malformed{};  // groups (deprecated) and invalid types
    }
    if (n > b_.size() - pos_) throw Malformed{};
    const size_t begin = pos_;
    pos_ += n;
    return {begin, pos_};
  }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Copies message `m` field by field; a field `descend` names (length-delimited) is replaced by
// `rewrite(payload)` (re-framed with its new length), a field `drop` names is left out and
// handed to `dropped(payload)`.
template <class Rewrite, class Dropped>
std::string copy_fields(std::string_view m, uint64_t descend, Rewrite rewrite, uint64_t drop, Dropped dropped) {
  std::string out;
  Walker w(m);
  while (!w.done()) {
    const size_t start = w.pos();
    const uint64_t tag = w.varint();
    const uint64_t field = tag >> 3, wt = tag & 7;
    const size_t tag_end = w.pos();
    const auto [b, e] = w.payload(wt);
    if (wt == kLengthDelimited && field == drop) {
      dropped(m.substr(b, e - b));
    } else if (wt == kLengthDelimited && field == descend) {
      const std::string inner = rewrite(m.substr(b, e - b));
      out.append(m.substr(start, tag_end - start));
      put_varint(out, inner.size());
      out += inner;
    } else {
      out.append(m.substr(start, w.pos() - start));
    }
  }
  return out;
}

constexpr uint64_t kNone = 0;  // no protobuf field has number 0

}  // namespace

std::optional<StrippedModel> strip_initializer_data(std::string_view model) {
  StrippedModel s;
  auto none = [](std::string_view) {};
  auto tensor = [&](std::string_view t) {
    std::optional<std::string_view> raw;
    std::string out = copy_fields(t, kNone, [](std::string_view) { return std::string(); }, kTensorRawData,
                                  [&](std::string_view r) { raw = r; });
    s.raw.push_back(raw);
    return out;
  };
  auto graph = [&](std::string_view g) { return copy_fields(g, kGraphInitializer, tensor, kNone, none); };
  try {
    s.model = copy_fields(model, kModelGraph, graph, kNone, none);
  } catch (const Malformed&) {
    return std::nullopt;
  }
  return s;
}

}  // namespace trnsim::compiler
