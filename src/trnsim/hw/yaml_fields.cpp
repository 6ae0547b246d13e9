#include "trnsim/hw/yaml_fields.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "trnsim/common/error.h"

namespace trnsim::hw {
namespace {

// Errors are one line: a value spanning lines is shown flattened and cut short.
std::string one_line(std::string s, size_t max_len = 80) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > max_len) s = s.substr(0, max_len - 3) + "...";
  return s;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string join(const std::vector<std::string_view>& v) {
  std::string out;
  for (auto s : v) out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

std::string dtype_names() {
  std::string out;
  for (auto t : numerics::all_dtypes()) out += (out.empty() ? "" : ", ") + std::string(numerics::name(t));
  return out;
}

}  // namespace

std::string show(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "";
  if (node.IsScalar()) return one_line(node.Scalar());
  YAML::Emitter out;
  out << YAML::Flow << node;
  return one_line(out.c_str());
}

std::string where(const std::string& source, const YAML::Node& node) {
  if (!node.IsDefined() || node.Mark().is_null()) return source;
  return fmt::format("{}:{}", source, node.Mark().line + 1);
}

YAML::Node parse_yaml(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::string at = e.mark.is_null() ? source : fmt::format("{}:{}", source, e.mark.line + 1);
    throw ConfigError(one_line(fmt::format("{}: invalid YAML: {}", at, e.msg), 200));
  }
}

YamlMap::YamlMap(const YAML::Node& node, std::string source, std::string path,
                 std::vector<std::string_view> keys, bool any_keys)
    : node_(node), source_(std::move(source)), path_(std::move(path)), keys_(std::move(keys)),
      any_keys_(any_keys) {
  if (!node_.IsDefined() || !node_.IsMap()) {
    // A whole file that is not a mapping is not a spec at all (a system's `chip:` can name any
    // path): say so without echoing its content.
    if (path_.empty())
      throw ConfigError(fmt::format("{}: not a spec: expected a mapping of keys to values at the top level", source_));
    std::string what = path_;
    throw ConfigError(fmt::format("{}: {}: expected a mapping of keys to values, got '{}'",
                                  where(source_, node_), what, show(node_)));
  }
  std::set<std::string, std::less<>> seen;
  for (const auto& kv : node_) {
    const std::string& key = kv.first.Scalar();
    if (!seen.insert(key).second)
      throw ConfigError(fmt::format("{}: {}: duplicate key", where(source_, kv.first), field(key)));
    if (any_keys_ || std::find(keys_.begin(), keys_.end(), key) != keys_.end()) continue;
    std::string hint;
    size_t best = 3;  // suggest a declared key at most two edits away
    for (auto k : keys_)
      if (size_t d = edit_distance(k, key); d < best) {
        best = d;
        hint = fmt::format("did you mean '{}'? ", k);
      }
    throw ConfigError(fmt::format("{}: {}: unknown key; {}expected one of: {}", where(source_, kv.first),
                                  field(key), hint, join(keys_)));
  }
}

std::string YamlMap::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool YamlMap::has(std::string_view key) {
  asked_.insert(std::string(key));
  const YAML::Node& n = node_;
  YAML::Node v = n[std::string(key)];
  return v.IsDefined() && !v.IsNull();
}

void YamlMap::missing(std::string_view key, std::string_view expected) const {
  throw ConfigError(fmt::format("{}: {}: missing (expected {})", source_, field(key), expected));
}

void YamlMap::fail(const YAML::Node& at, std::string_view field, std::string_view expected) const {
  throw ConfigError(fmt::format("{}: {}: expected {}, got '{}'", where(source_, at), field, expected, show(at)));
}

YAML::Node YamlMap::required(std::string_view key, std::string_view expected) {
  asked_.insert(std::string(key));
  const YAML::Node& n = node_;
  YAML::Node v = n[std::string(key)];
  if (!v.IsDefined()) missing(key, expected);
  return v;
}

std::string YamlMap::text(std::string_view key) {
  constexpr std::string_view what = "a non-empty string";
  YAML::Node v = required(key, what);
  if (!v.IsScalar() || v.Scalar().empty()) fail(v, field(key), what);
  return v.Scalar();
}

int YamlMap::integer_at(const YAML::Node& v, std::string_view field, int min) const {
  std::string what = min == 1 ? "a positive integer" : fmt::format("an integer >= {}", min);
  int out = 0;
  if (v.IsScalar()) {
    const std::string& s = v.Scalar();
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc() && end == s.data() + s.size() && out >= min) return out;
  }
  fail(v, field, what);
}

int YamlMap::integer(std::string_view key, int min) {
  return integer_at(required(key, min == 1 ? "a positive integer" : "an integer"), field(key), min);
}

double YamlMap::number_at(const YAML::Node& v, std::string_view field, double min_exclusive) const {
  std::string what = fmt::format("a plain number > {} (no unit)", min_exclusive);
  double out = 0;
  if (v.IsScalar()) {
    const std::string& s = v.Scalar();
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec == std::errc() && end == s.data() + s.size() && std::isfinite(out) && out > min_exclusive)
      return out;
  }
  fail(v, field, what);
}

double YamlMap::number(std::string_view key, double min_exclusive) {
  return number_at(required(key, "a plain number"), field(key), min_exclusive);
}

bool YamlMap::flag(std::string_view key) {
  constexpr std::string_view what = "true or false";
  YAML::Node v = required(key, what);
  if (v.IsScalar() && v.Scalar() == "true") return true;
  if (v.IsScalar() && v.Scalar() == "false") return false;
  fail(v, field(key), what);
}

double YamlMap::quantity_at(const YAML::Node& v, std::string_view field, Dimension d) const {
  if (!v.IsScalar()) fail(v, field, expectation(d));
  try {
    return parse_quantity(v.Scalar(), d);
  } catch (const ConfigError& e) {  // "expected ..., got '...' (hint)": add file, line, field
    throw ConfigError(fmt::format("{}: {}: {}", where(source_, v), field, e.what()));
  }
}

double YamlMap::quantity_value(std::string_view key, Dimension d) {
  return quantity_at(required(key, expectation(d)), field(key), d);
}

numerics::DType YamlMap::dtype_at(const YAML::Node& v, std::string_view field) const {
  if (v.IsScalar())
    if (auto t = numerics::parse_dtype(v.Scalar())) return *t;
  fail(v, field, "a dtype name (" + dtype_names() + ")");
}

YamlMap YamlMap::map(std::string_view key, std::vector<std::string_view> keys) {
  return YamlMap(required(key, "a mapping"), source_, field(key), std::move(keys));
}

YamlMap YamlMap::any_map(std::string_view key) {
  return YamlMap(required(key, "a mapping"), source_, field(key), {}, true);
}

std::vector<YAML::Node> YamlMap::sequence(std::string_view key) {
  YAML::Node v = required(key, "a list [a, b, ...]");
  if (!v.IsSequence()) fail(v, field(key), "a list [a, b, ...]");
  return {v.begin(), v.end()};
}

std::vector<std::pair<YAML::Node, YAML::Node>> YamlMap::entries() const {
  std::vector<std::pair<YAML::Node, YAML::Node>> out;
  for (const auto& kv : node_) out.emplace_back(kv.first, kv.second);
  return out;
}

void YamlMap::done() const {
  for (auto k : keys_)
    if (!asked_.count(k))
      throw std::logic_error(fmt::format("spec reader declares '{}' but never reads it", field(k)));
}

}  // namespace trnsim::hw
