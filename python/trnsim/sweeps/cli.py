"""`python -m trnsim sweep [sweep.yaml] [-o results.parquet] [--address ray://.. | --local N] [--query SQL]`."""
from __future__ import annotations

import argparse
import json
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", nargs="?", help="the sweep file (YAML); leave out to only --query existing results")
    p.add_argument("-o", "--output", default="results.parquet", help="the Parquet file (default results.parquet)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--address", help="a Ray cluster to run on (ray://head:10001, or auto)")
    where.add_argument("--local", type=int, default=None, metavar="N",
                       help="CPUs of the local Ray started in this process (default all); 0: no Ray, one point after another")
    p.add_argument("--query", metavar="SQL", help="run SQL over the results, the view `results`, after the sweep")
    p.add_argument("--limit", type=int, default=None, help=argparse.SUPPRESS)  # tests: stop early, as an interrupt would
    p.add_argument("--query-timeout-s", type=float, default=None, metavar="S",
                   help="stop the query after S seconds (default 600); it also runs within TRNSIM_MAX_MEMORY")
    p.add_argument("--json", action="store_true", help="print the summary (and query rows) as JSON; no progress")


def _print_table(cols, rows, as_json: bool) -> None:
    if as_json:
        print(json.dumps([dict(zip(cols, r)) for r in rows], default=str))
        return
    from rich.console import Console
    from rich.table import Table
    t = Table(*cols)
    for r in rows:
        t.add_row(*("" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v) for v in r))
    Console(width=200 if not sys.stdout.isatty() else None).print(t)


def run(args: argparse.Namespace) -> int:
    if args.local is not None and not 0 <= args.local <= 4096:
        # --local 2^31 asked Ray for 2^31 CPUs and ran past a minute.
        print(f"trnsim: error: sweep: --local {args.local}: expected 0 (no Ray) to 4096 CPUs", file=sys.stderr)
        return 2
    if args.query is not None and not args.query.strip():
        print("trnsim: error: sweep: --query is empty; give an SQL statement over the view `results`", file=sys.stderr)
        return 2
    if args.query_timeout_s is not None and args.query is None:
        print("trnsim: error: sweep: --query-timeout-s needs --query", file=sys.stderr)
        return 2
    if args.spec is None and args.query is None:
        print("trnsim: error: sweep: give a sweep file, or --query SQL over existing results", file=sys.stderr)
        return 2
    try:
        from trnsim.sweeps import query, run_sweep
    except ImportError as e:
        print(f"trnsim: error: sweep needs {e.name} (pip install -r requirements.txt)", file=sys.stderr)
        return 2
    from trnsim.sweeps import SweepSpecError
    from trnsim.sweeps.query import SweepQueryError
    from trnsim.sweeps.runner import SweepInterrupted
    try:
        if args.spec is not None:
            s = run_sweep(args.spec, args.output, address=args.address, local=args.local,
                          progress=not args.json, limit=args.limit)
            here = f" ({s['driver_points']} of them in this process while Ray started)" if s.get("driver_points") else ""
            if s.get("ray_started") is False and s["ran"]:
                here = " (all in this process: too short a sweep to start Ray for)"
            msg = (f"sweep: {s['points']} points, {s['skipped']} already done, ran {s['ran']} "
                   f"({s['failed']} failed) in {s['wall_s']:.1f} s{here} -> {s['output']} ({s['rows']} rows)")
            if args.json and args.query is None:
                print(json.dumps({"kind": "sweep", **s}))
            else:
                print(msg, file=sys.stderr)
        if args.query is not None:
            kw = {} if args.query_timeout_s is None else {"timeout_s": args.query_timeout_s}
            cols, rows = query(args.output, args.query, **kw)
            _print_table(cols, rows, args.json)
    except (SweepSpecError, SweepQueryError, FileNotFoundError, ConnectionError) as e:
        print(f"trnsim: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:  # ray or duckdb, imported when first needed
        print(f"trnsim: error: sweep needs {e.name} (pip install -r requirements.txt)", file=sys.stderr)
        return 2
    except SweepInterrupted as e:
        print(f"trnsim: {e}", file=sys.stderr)
        return 130
    return 0
