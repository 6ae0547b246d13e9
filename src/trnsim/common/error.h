// Typed errors. A message is written for the user who has to act on it: which file, which
// field, what was expected and what was found. Entry points (CLI, bindings) catch Error and
// print what(); nothing below them prints or exits.
#pragma once
#include <stdexcept>
#include <string>

namespace trnsim {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A config file (chip, system) is malformed: missing field, wrong unit, bad value, unknown key.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A value or shape does not fit the hardware or the op (tile wider than a PSUM bank, ...).
class ShapeError : public Error {
 public:
  using Error::Error;
};

// Well-formed input that trnsim does not model (an ONNX op, a dtype on a chip without it).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

}  // namespace trnsim
