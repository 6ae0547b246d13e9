"""`python -m trnsim run model.onnx [--chip trn2] [--dtype bf16] [--check] [--json]`,
`python -m trnsim report RESULT... -o report.html` and `python -m trnsim sweep sweep.yaml`."""
from __future__ import annotations

import argparse
import sys


class _OneLineParser(argparse.ArgumentParser):
    """Usage errors as the C++ CLI's: `trnsim: error: ...` on one line, exit 2 (argparse
    printed the usage first, on lines of its own)."""

    def error(self, message: str):
        self.exit(2, f"trnsim: error: {self.prog}: {' '.join(message.split())}\n")


def main(argv: list[str] | None = None) -> int:
    parser = _OneLineParser(prog="python -m trnsim",
                            description="trnsim: run models on a simulated Trainium-class chip")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    from trnsim import run_check
    p_run = sub.add_parser("run", help="compile and simulate an ONNX model; --check compares with onnxruntime")
    run_check.add_arguments(p_run)
    from trnsim.reports import cli as report_cli
    from trnsim.sweeps import cli as sweep_cli
    report_cli.add_arguments(sub.add_parser("report", help="draw results (JSON of any kind, a sweep's Parquet) as one HTML file"))
    sweep_cli.add_arguments(sub.add_parser("sweep", help="run a sweep file's points as Ray tasks into Parquet"))
    args = parser.parse_args(argv)
    if args.command == "run":
        try:
            return run_check.run(args)
        except Exception as e:  # a bug, not bad input: still one line, never a traceback (as the C++ CLI)
            msg = " ".join(str(e).split())
            print(f"trnsim: internal error: {type(e).__name__}: {msg}", file=sys.stderr)
            return 3
    if args.command == "report":
        return report_cli.run(args)
    if args.command == "sweep":
        return sweep_cli.run(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
