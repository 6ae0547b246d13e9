// Hands a command over to the Python package (`python -m trnsim ...`) for the parts that need
// Python libraries: `trnsim run --check` compares with onnxruntime, a Python package.
#pragma once
#include <string>
#include <vector>

namespace trnsim::cli {

// argv[0] of this process, as typed (main() sets it): the venv's bin/ holds both the command
// and its Python, so the interpreter is looked up beside it.
void set_program_path(const std::string& argv0);

// The interpreter that runs `python -m trnsim`: $TRNSIM_PYTHON, else python3 (then python)
// beside this command as invoked (not following links), else the Python the build was
// configured with, else python3 on PATH.
std::string find_python();

// Replaces this process with `<python> -m trnsim <args...>`; returns only by throwing an Error
// that names the interpreter and how to choose another.
[[noreturn]] void exec_python_module(const std::vector<std::string>& args);

}  // namespace trnsim::cli
