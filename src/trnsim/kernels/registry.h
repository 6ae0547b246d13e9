// The kernel library by name: one list that the CLI (`trnsim kernel <name>`), the Python API
// (trnsim.kernel) and the tests share. Each entry declares its typed parameters (sizes, flags,
// choices), the dtypes it takes, how to build its program, its double-precision reference and
// the tolerance that reference is held to per dtype.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/hw/chip_spec.h"
#include "trnsim/isa/program.h"

namespace trnsim::kernels {

using numerics::DType;

struct KernelParam {
  enum class Kind : uint8_t { Int, Flag, Choice };
  std::string name;   // CLI spelling ("head-dim"); Python passes head_dim
  std::string help;
  Kind kind = Kind::Int;
  int64_t default_int = 0;             // Int (and Flag: 0/1)
  int64_t min = 1, max = int64_t{1} << 40;
  std::vector<std::string> choices;    // Choice; the first is the default
};

// Resolved arguments: every parameter of the kernel has a value.
struct KernelArgs {
  DType dtype = DType::BF16;
  std::map<std::string, int64_t> ints;          // Int and Flag parameters
  std::map<std::string, std::string> choices;   // Choice parameters
  int64_t i(const std::string& name) const;
  bool flag(const std::string& name) const { return i(name) != 0; }
  const std::string& choice(const std::string& name) const;
};

struct Tolerance {
  double abs = 0;   // |got - want| <= abs + rel * |want|, elementwise
  double rel = 0;
};

using Tensors = std::map<std::string, std::vector<float>>;
using ReferenceOutputs = std::map<std::string, std::vector<double>>;

struct KernelDef {
  std::string name;
  std::string description;
  std::vector<KernelParam> params;
  std::vector<DType> dtypes;   // the first is the default
  std::function<isa::Program(const hw::ChipSpec&, const KernelArgs&)> build;
  // Every Output tensor from the inputs (as the kernel sees them: already rounded to their
  // dtype), computed in double precision.
  std::function<ReferenceOutputs(const KernelArgs&, const Tensors&)> reference;
  // What the output may differ from the reference by, for these arguments (dtype, sizes).
  std::function<Tolerance(const KernelArgs&)> tolerance;
  // Range of the seeded uniform random values of an input; empty: [-1, 1].
  std::function<std::pair<double, double>(const KernelArgs&, const std::string& input)> input_range;
};

const std::vector<KernelDef>& kernel_registry();
// Throws UnsupportedError listing the registered names.
const KernelDef& find_kernel(std::string_view name);
std::string kernel_names();  // "activation, attention, ..."

// Fills defaults and checks the given values (text, as from a command line): an unknown
// parameter, a value out of range or a dtype the kernel does not take is a ShapeError /
// UnsupportedError naming the parameter and the limit.
KernelArgs resolve_args(const KernelDef& k, const std::map<std::string, std::string>& given,
                        std::string_view dtype = "");

// The same parameter name spelt for the CLI ("head-dim") from Python ("head_dim").
std::string canonical_param_name(std::string_view name);

}  // namespace trnsim::kernels
