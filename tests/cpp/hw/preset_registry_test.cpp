// The compiled-in presets: names, lookup, YAML text, and examples kept out.
#include "trnsim/hw/preset_registry.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "trnsim/common/error.h"

namespace trnsim::hw {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(PresetRegistry, EveryPresetTheIssueAsksFor) {
  auto chips = preset_names(PresetKind::Chip);
  EXPECT_EQ(chips, (std::vector<std::string>{"inf2", "trn1", "trn2", "trn3"}));
  auto systems = preset_names(PresetKind::System);
  for (auto s : {"trn1.2xlarge", "trn1.32xlarge", "inf2.48xlarge", "trn2.48xlarge", "trn2-ultraserver",
                 "trn3-ultraserver-gen1", "trn3-ultraserver-gen2"})
    EXPECT_TRUE(contains(systems, s)) << s;
}

TEST(PresetRegistry, ExamplesAreNotPresets) {
  for (auto& f : embedded_config_files())
    EXPECT_TRUE(f.path.starts_with("chips/") || f.path.starts_with("systems/") || f.path.starts_with("models/")) << f.path;
  EXPECT_EQ(find_preset(PresetKind::Chip, "trn4-whatif"), nullptr);
}

TEST(PresetRegistry, LookupAndYaml) {
  const EmbeddedFile* f = find_preset(PresetKind::Chip, "trn2");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->path, "chips/trn2.yaml");
  EXPECT_EQ(preset_source(*f), "preset:chips/trn2.yaml");
  EXPECT_EQ(find_preset(PresetKind::System, "trn2"), nullptr);  // a chip, not a system
  EXPECT_NE(preset_yaml("trn2.48xlarge").find("name: trn2.48xlarge"), std::string::npos);
  EXPECT_NE(preset_yaml("trn2").find("# "), std::string::npos);  // comments (sources) kept
  try {
    preset_yaml("trn9");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("chips: inf2, trn1, trn2, trn3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trnsim::hw
