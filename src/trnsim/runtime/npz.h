// Model inputs from numpy .npz files (`trnsim run model.onnx --inputs file.npz`): the zip
// archive is read with libzip (stored and deflated members, so np.savez and
// np.savez_compressed), each member "NAME.npy" parsed here: format versions 1-3, little-endian
// or byte-order-free float32/float64/float16/int64/int32/int16/int8/uint8/bool, C order.
// Anything else is an Error naming the file and member (unknown dtype, Fortran order, a
// header that does not parse, data shorter than the shape).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trnsim/compiler/compiled_model.h"

namespace trnsim::runtime {

struct NpyArray {
  std::string dtype;            // numpy name: "float32", "int64", "bool", ...
  std::vector<int64_t> shape;   // row-major
  std::vector<double> values;   // exact for every supported dtype (int64 up to 2^53)
  bool integral() const;        // an integer or bool dtype
};

// One .npy file's bytes; `what` names it in errors ("inputs.npz: member 'x.npy'").
NpyArray parse_npy(std::string_view bytes, const std::string& what);
// Every member of the archive by name without ".npy".
// Memory is bounded up front (common/limits.h): the members' announced sizes, then each
// array's values, so a zip bomb is refused from the archive's directory.
std::map<std::string, NpyArray> read_npz(const std::string& path);
// The same from the archive's bytes in memory (fuzzing, Python); `source` names it in errors.
std::map<std::string, NpyArray> read_npz_bytes(std::string_view bytes, const std::string& source);

// The model's inputs from the archive as the runtime takes them (row-major fp32). Every input
// must be there with the shape the model was compiled for. An array that is not an input must
// be one the program was specialised on: named in `specialised`, or a graph constant of the
// same name with the same values. Integers past 2^24 (not exact in fp32) are refused.
// `source` names the archive in errors.
std::map<std::string, std::vector<float>> model_inputs(const std::map<std::string, NpyArray>& arrays,
                                                       const compiler::CompiledModel& model,
                                                       const std::string& source,
                                                       const std::vector<std::string>& specialised = {});

}  // namespace trnsim::runtime
