#include "trnsim/runtime/value_specialisation.h"

#include <algorithm>

#include "trnsim/common/error.h"

namespace trnsim::runtime {

SpecialisedModel compile_specialised(const compiler::Graph& g, const hw::ChipSpec& chip,
                                     compiler::CompileOptions options,
                                     const std::map<std::string, NpyArray>& values) {
  for (const auto& [name, a] : values)
    if (!options.input_shapes.count(name)) options.input_shapes[name] = a.shape;
  SpecialisedModel out;
  compiler::Graph bound = g;
  while (true) {
    try {
      out.model = compiler::compile(bound, chip, options);
      return out;
    } catch (const ConstantRequiredError& e) {
      std::vector<std::string> names;
      for (const auto& t : e.tensors()) {
        auto in = std::find(bound.inputs.begin(), bound.inputs.end(), t);
        auto v = values.find(t);
        // Integer shape operands, and small float ones (Resize's scales); the array's kind must
        // be the input's (a float array is no integer shape).
        if (in == bound.inputs.end() || v == values.end() || v->second.values.size() > kMaxSpecialisedElements ||
            v->second.integral() != compiler::is_integral(bound.tensor(t).type))
          continue;
        if (std::find(names.begin(), names.end(), t) == names.end()) names.push_back(t);
      }
      if (names.empty()) throw;
      for (const auto& n : names) {
        compiler::TensorInfo& t = bound.tensor(n);
        const NpyArray& a = values.at(n);
        t.data = a.values;
        t.shape = a.shape;
        t.shape_known = true;
        t.dim_params.clear();
        bound.inputs.erase(std::find(bound.inputs.begin(), bound.inputs.end(), n));
        options.input_shapes.erase(n);
        out.specialised.push_back(n);
      }
    }
  }
}

}  // namespace trnsim::runtime
