"""`python -m trnsim run model.onnx [--chip trn2] [--dtype bf16] [--check] [--json]`."""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trnsim",
                                     description="trnsim: run models on a simulated Trainium-class chip")
    sub = parser.add_subparsers(dest="command", required=True)
    from trnsim import run_check
    p_run = sub.add_parser("run", help="compile and simulate an ONNX model; --check compares with onnxruntime")
    run_check.add_arguments(p_run)
    args = parser.parse_args(argv)
    if args.command == "run":
        try:
            return run_check.run(args)
        except Exception as e:  # a bug, not bad input: still one line, never a traceback (as the C++ CLI)
            msg = " ".join(str(e).split())
            print(f"trnsim: internal error: {type(e).__name__}: {msg}", file=sys.stderr)
            return 3
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
