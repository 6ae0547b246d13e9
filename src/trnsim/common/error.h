// Typed errors. A message is written for the user who has to act on it: which file, which
// field, what was expected and what was found. Entry points (CLI, bindings) catch Error and
// print what(); nothing below them prints or exits.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

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

// A value the compiler needs at compile time (a shape, axes, pads, ...) is computed at run time.
// `tensors` names the tensors it would need as constants, so a caller that can bind graph
// inputs to their run-time values (value specialisation) knows which, without parsing text.
class ConstantRequiredError : public UnsupportedError {
 public:
  ConstantRequiredError(const std::string& message, std::vector<std::string> tensors)
      : UnsupportedError(message), tensors_(std::move(tensors)) {}
  const std::vector<std::string>& tensors() const { return tensors_; }

 private:
  std::vector<std::string> tensors_;
};

}  // namespace trnsim
