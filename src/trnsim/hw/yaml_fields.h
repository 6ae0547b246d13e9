// Reading one YAML mapping of a config into a spec. A YamlMap knows the file it came from and
// its dotted path, so every error is one line naming file, line and field:
//   <file>:<line>: <field.path>: expected <what>, got '<value>'
//   <file>: <field.path>: missing (expected <what>)
// It rejects duplicate keys and keys its reader did not declare, and checks (done()) that the
// reader asked for every key it declared, so a declared-but-ignored field cannot slip in.
#pragma once
#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trnsim/hw/quantity.h"
#include "trnsim/numerics/dtype.h"

namespace trnsim::hw {

// Parses YAML text; a syntax error becomes ConfigError "<source>:<line>: invalid YAML: ...".
YAML::Node parse_yaml(const std::string& text, const std::string& source);

class YamlMap {
 public:
  // `keys` are the keys this mapping may hold; empty `keys` with `any_keys` accepts every key
  // (dtype-keyed maps, whose keys the reader checks itself).
  YamlMap(const YAML::Node& node, std::string source, std::string path,
          std::vector<std::string_view> keys, bool any_keys = false);

  const std::string& source() const { return source_; }
  std::string field(std::string_view key) const;  // "core.tensor.clock"
  bool has(std::string_view key);                 // present and not null

  // Required fields; absent -> "missing", malformed -> "expected ..., got ...".
  std::string text(std::string_view key);
  int integer(std::string_view key, int min = 1);
  double number(std::string_view key, double min_exclusive = 0);
  bool flag(std::string_view key);
  template <class Q> Q quantity(std::string_view key) {
    return Q(quantity_value(key, DimensionOf<Q>::value));
  }
  template <class Q> std::optional<Q> optional_quantity(std::string_view key) {
    if (!has(key)) return std::nullopt;
    return quantity<Q>(key);
  }
  YamlMap map(std::string_view key, std::vector<std::string_view> keys);
  YamlMap any_map(std::string_view key);  // keys checked by the caller (e.g. dtype names)
  std::vector<YAML::Node> sequence(std::string_view key);

  // Every (key, value) in file order, for any-key maps.
  std::vector<std::pair<YAML::Node, YAML::Node>> entries() const;

  // Readers for values already taken out of this map (sequence items, any-map entries).
  numerics::DType dtype_at(const YAML::Node& key_or_value, std::string_view field) const;
  double quantity_at(const YAML::Node& value, std::string_view field, Dimension d) const;
  int integer_at(const YAML::Node& value, std::string_view field, int min) const;
  double number_at(const YAML::Node& value, std::string_view field, double min_exclusive) const;

  // The value node of a key that is present (for errors found across fields).
  YAML::Node at(std::string_view key) const { return node_[std::string(key)]; }
  [[noreturn]] void fail(const YAML::Node& at, std::string_view field, std::string_view expected) const;
  [[noreturn]] void fail_key(std::string_view key, std::string_view expected) const {
    fail(at(key), field(key), expected);
  }
  // Throws std::logic_error if a declared key was never asked for (a reader bug).
  void done() const;

 private:
  double quantity_value(std::string_view key, Dimension d);
  YAML::Node required(std::string_view key, std::string_view expected);
  [[noreturn]] void missing(std::string_view key, std::string_view expected) const;

  YAML::Node node_;
  std::string source_;
  std::string path_;
  std::vector<std::string_view> keys_;
  bool any_keys_;
  std::set<std::string, std::less<>> asked_;
};

// The value of a node as one short line, for "got '<value>'".
std::string show(const YAML::Node& node);
// "<source>:<line>" of a node, or "<source>" when the node has no position.
std::string where(const std::string& source, const YAML::Node& node);

}  // namespace trnsim::hw
