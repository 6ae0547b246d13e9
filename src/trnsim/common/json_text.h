// JSON text of a result for output. Names in results come from users' files (ONNX node and
// tensor names, YAML names) and need not be UTF-8; JSON text must be, so invalid bytes are
// written as U+FFFD instead of failing the whole output (nlohmann's type_error 316).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace trnsim {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace trnsim
