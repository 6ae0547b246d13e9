// Helpers for hw tests: write a (modified) preset to a temporary file and capture load errors.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "trnsim/common/error.h"
#include "trnsim/hw/preset_registry.h"

namespace trnsim::hw::testing {

// A fresh directory per test, under GoogleTest's temporary directory.
inline std::filesystem::path temp_dir() {
  auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = std::filesystem::path(::testing::TempDir()) / "trnsim_hw" /
             (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// The preset's text with the first `from` replaced by `to` (the test fails if `from` is absent).
inline std::string preset_with(std::string_view preset, const std::string& from, const std::string& to) {
  std::string text(preset_yaml(preset));
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in preset " << preset;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// 1-based line of the first occurrence of `needle` in `text`.
inline int line_of(const std::string& text, const std::string& needle) {
  auto at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

template <class F> std::string config_error(F load) {
  try {
    load();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

}  // namespace trnsim::hw::testing
