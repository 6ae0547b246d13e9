"""One sweep point: the trnsim command line of its options, run with --json, its result
flattened into table rows (one per object when the command prints a list, as collective does).
Runs the same in a Ray worker and in this process."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

FLAT_SEP = "_"  # nested fields join with "_": decode_breakdown.matmul_s -> decode_breakdown_matmul_s


def find_trnsim(explicit: Optional[str] = None) -> str:
    """The trnsim command: the sweep's `trnsim:`, $TRNSIM_EXE, beside this Python, on PATH, or this tree's build."""
    cands = [explicit, os.environ.get("TRNSIM_EXE"), str(Path(sys.executable).parent / "trnsim"), shutil.which("trnsim"),
             str(Path(__file__).resolve().parents[3] / "build" / "src" / "trnsim")]
    for c in cands:
        if c and os.access(c, os.X_OK) and not os.path.isdir(c):
            return os.path.abspath(c)
    raise FileNotFoundError("cannot find the trnsim command: set `trnsim:` in the sweep file or TRNSIM_EXE")


def command_line(exe: str, command: str, args: list[str], options: dict[str, Any]) -> list[str]:
    """`trnsim <command> <args> --opt value ... --json`: True is a bare flag, False/None are left out,
    a list is a comma-separated value (as --sizes 1K,1M)."""
    argv = [exe, command, *args]
    for k, v in options.items():
        flag = "--" + str(k).replace("_", "-")
        if v is True:
            argv.append(flag)
        elif v is False or v is None:
            continue
        elif isinstance(v, list):
            argv += [flag, ",".join(map(str, v))]
        else:
            argv += [flag, str(v)]
    return argv + ["--json"]


def flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    """Scalars of nested dicts under joined names; lists of scalars as JSON text; lists of objects
    (ops, units, requests, time series) are left out of the table."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + FLAT_SEP))
        elif isinstance(v, list):
            if all(not isinstance(x, (dict, list)) for x in v):
                out[key] = json.dumps(v)
        else:
            out[key] = v
    return out


def rows_of_result(result: Any, options: dict[str, Any]) -> list[dict[str, Any]]:
    """The table rows of one point's result: its inputs, then its flattened fields (a field that
    repeats an input with another value is kept as result_<name>)."""
    objs = result if isinstance(result, list) else [result]
    rows = []
    for i, obj in enumerate(objs):
        row = {k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in options.items()}
        for k, v in flatten(obj if isinstance(obj, dict) else {"value": obj}).items():
            if k in row and row[k] != v:
                row["result_" + k] = v
            elif k not in row:
                row[k] = v
        if len(objs) > 1:
            row["item"] = i
        rows.append(row)
    return rows


def run_point(exe: str, command: str, args: list[str], options: dict[str, Any], pid: str,
              timeout_s: Optional[float] = None, env: Optional[dict[str, str]] = None,
              live: Optional[set] = None) -> list[dict[str, Any]]:
    """Runs one point and returns its rows; a failure is one row with status "error" and the error
    (the command's last stderr line), never an exception. `env` values may hold {point_id}.
    `cpu_s` is the point's own CPU time (user + sys of its process), the same wherever it runs.
    `live`: a set that holds the point's process while it runs (so another thread can kill it)."""
    argv = command_line(exe, command, args, options)
    penv = {**os.environ, **{k: v.replace("{point_id}", pid) for k, v in env.items()}} if env else None
    t0 = time.perf_counter()
    base = {"point_id": pid}
    try:
        code, out, err, cpu = _run(argv, penv, timeout_s, live)
    except OSError as e:
        return [{**base, **_opts(options), "status": "error", "error": f"cannot run {exe}: {e}", "wall_s": 0.0}]
    wall = time.perf_counter() - t0
    base.update(wall_s=wall, cpu_s=cpu)
    if code is None:
        return [{**base, **_opts(options), "status": "error", "error": f"timed out after {timeout_s} s"}]
    if code != 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        msg = lines[-1] if lines else f"exit status {code}"
        return [{**base, **_opts(options), "status": "error", "error": msg}]
    try:
        result = json.loads(out)
    except json.JSONDecodeError as e:
        return [{**base, **_opts(options), "status": "error", "error": f"output is not JSON: {e}"}]
    return [{**base, "status": "ok", "error": None, **r} for r in rows_of_result(result, options)]


class PointPool:
    """A Ray actor's body that runs points, several at once (its max_concurrency): on a local Ray
    one such worker process serves every CPU of the node, where a task per point needs a Python
    worker per CPU (each 0.4 CPU-s to start: importing Ray)."""

    def run(self, *args) -> list[dict[str, Any]]:
        return run_point(*args)


def _run(argv: list[str], env: Optional[dict[str, str]], timeout_s: Optional[float], live: Optional[set]):
    """(exit code or None when timed out, stdout, stderr, CPU seconds) of a command. Output goes to
    temporary files and the process is reaped with wait4, which alone reports its own CPU time."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        if live is not None:
            live.add(p)
        killed = threading.Event()
        timer = threading.Timer(timeout_s, lambda: (killed.set(), p.kill())) if timeout_s else None
        try:
            if timer:
                timer.start()
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:  # Ctrl-C: the point's process goes too, as with subprocess.run
            p.kill()
            p.wait()
            raise
        finally:
            if timer:
                timer.cancel()
            if live is not None:
                live.discard(p)
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        text = (out.read().decode(errors="replace"), err.read().decode(errors="replace"))
    return (None if killed.is_set() else p.returncode), *text, ru.ru_utime + ru.ru_stime


def _opts(options: dict[str, Any]) -> dict[str, Any]:
    return {k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in options.items()}
