"""The calibration driver: every published row of every `bench/calibration_*.py` module,
simulated against published, the error per row and the median absolute error per table and
metric and over all tables (issue 10's target: median |error| of p50 <= 15%, no row over 35%).

    PYTHONPATH=python .venv/bin/python bench/calibration.py [--table encoder] [--json]

Each module defines rows(progress=None) -> list of {table, row, metric, published, simulated,
error}; a row that failed to simulate has simulated/error None and a `failure` message.
Exit status 1 if any row failed.
"""
from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def modules(table: str | None):
    for path in sorted(HERE.glob("calibration_*.py")):
        name = path.stem
        if table and name != f"calibration_{table}":
            continue
        yield name.removeprefix("calibration_"), importlib.import_module(name)


def summary(rows: list[dict]) -> list[dict]:
    """Median and max |error| per (table, metric), then per metric over all tables."""
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r["error"] is not None:
            groups.setdefault((r["table"], r["metric"]), []).append(abs(r["error"]))
            groups.setdefault(("all", r["metric"]), []).append(abs(r["error"]))
    return [{"table": t, "metric": m, "rows": len(v), "median_abs_error": statistics.median(v),
             "max_abs_error": max(v)} for (t, m), v in sorted(groups.items(), key=lambda kv: (kv[0][0] == "all", kv[0]))]


def collect(table: str | None, show_progress: bool) -> list[dict]:
    rows: list[dict] = []
    mods = list(modules(table))
    if not mods:
        raise SystemExit(f"calibration: no module bench/calibration_{table}.py")
    if not show_progress:
        for _, mod in mods:
            rows += mod.rows()
        return rows
    from rich.progress import Progress
    with Progress(transient=True) as prog:
        for name, mod in mods:
            task = prog.add_task(name, total=None)

            def step(done, total, task=task):
                prog.update(task, advance=done, total=total)
            rows += mod.rows(progress=step)
    return rows


def print_tables(rows: list[dict], summ: list[dict], wall_s: float) -> None:
    from rich.console import Console
    from rich.table import Table
    con = Console()
    t = Table(title="trnsim vs published (simulated / published - 1)")
    for c in ("table", "row", "metric", "published", "simulated", "error"):
        t.add_column(c, justify="right" if c in ("published", "simulated", "error") else "left")
    for r in rows:
        if r["simulated"] is None:
            t.add_row(r["table"], r["row"], r["metric"], f"{r['published']:.4g}", "[red]failed", r.get("failure", "")[:60])
            continue
        e = r["error"]
        color = "green" if abs(e) <= 0.15 else "yellow" if abs(e) <= 0.35 else "red"
        t.add_row(r["table"], r["row"], r["metric"], f"{r['published']:.4g}", f"{r['simulated']:.4g}",
                  f"[{color}]{100 * e:+.1f}%")
    con.print(t)
    s = Table(title="median |error|")
    for c in ("table", "metric", "rows", "median |error|", "max |error|"):
        s.add_column(c)
    for g in summ:
        s.add_row(g["table"], g["metric"], str(g["rows"]), f"{100 * g['median_abs_error']:.1f}%",
                  f"{100 * g['max_abs_error']:.1f}%")
    con.print(s)
    con.print(f"wall time {wall_s:.1f} s")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", help="one table only (encoder, vision, ...)")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    rows = collect(a.table, show_progress=not a.json and sys.stderr.isatty())
    wall = time.perf_counter() - t0
    summ = summary(rows)
    if a.json:
        print(json.dumps({"kind": "compare", "time_s": wall, "rows": rows, "summary": summ}, indent=1))
    else:
        print_tables(rows, summ, wall)
    return 1 if any(r["simulated"] is None for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
