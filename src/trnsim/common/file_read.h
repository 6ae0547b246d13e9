// Reading a whole input file (model, saved program, config) with a size bound: a file is
// untrusted, and /dev/zero, a FIFO or a 100 GB file must be refused after at most `max_bytes`
// are read, never read until memory runs out.
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "trnsim/common/error.h"

namespace trnsim {

// The whole file, or Error "<path>: cannot read ..." / "<path>: larger than N bytes (<why>)".
// `limit_why` says where the bound comes from ("ONNX files are at most 2 GiB").
template <class E = Error>
std::string read_file_bounded(const std::string& path, int64_t max_bytes, const std::string& limit_why) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw E(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::string out;
  std::string chunk(1 << 20, '\0');
  while (f) {
    f.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = f.gcount();
    if (got <= 0) break;
    if (static_cast<int64_t>(out.size()) + got > max_bytes)
      throw E(fmt::format("{}: larger than {} bytes ({}); is it the right file?", path, max_bytes, limit_why));
    out.append(chunk.data(), static_cast<size_t>(got));
  }
  if (f.bad()) throw E(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  return out;
}

}  // namespace trnsim
