// `trnsim report` and `trnsim sweep` live in Python (plotly, Ray, pyarrow, DuckDB): the C++
// command passes every argument, --help included, to `python -m trnsim <command> ...`.
#include "trnsim/cli/command.h"
#include "trnsim/cli/python_handoff.h"

namespace trnsim::cli {
namespace {

Command handed_over(const char* name, const char* description) {
  return {name,
          [name](CLI::App& sub) -> std::function<int()> {
            sub.set_help_flag();  // Python prints the help, with every option it knows
            sub.allow_extras();
            sub.positionals_at_end(false);
            return [&sub, name]() -> int {
              std::vector<std::string> args{name};
              for (auto& a : sub.remaining()) args.push_back(a);
              exec_python_module(args);
            };
          },
          description};
}

Register reg_report{handed_over("report", "Draw results (JSON of any kind, or a sweep's Parquet) as one self-contained HTML report")};
Register reg_sweep{handed_over("sweep", "Run a sweep file's points as Ray tasks into Parquet; --query SQL over the results")};

}  // namespace
}  // namespace trnsim::cli
