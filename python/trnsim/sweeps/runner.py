"""Running a sweep's points as Ray tasks (a local Ray started in this process by default, or a
cluster by address), streaming finished points into the store; or one after another in this
process (`local=0`, the benchmark's baseline)."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Optional, Union

from trnsim.progress import Progress
from trnsim.sweeps.point import _opts, find_trnsim, run_point
from trnsim.sweeps.spec import Sweep, parse_spec, point_id
from trnsim.sweeps.store import SweepStore

class SweepInterrupted(Exception):
    """Ctrl-C during a sweep: the finished points are saved, the message says how to resume."""


FLUSH_EVERY_S = 2.0  # at most this long between part files, so an interruption loses little


def _stamp(rows: list[dict]) -> list[dict]:
    ns = time.time_ns()
    return [{**r, "finished_ns": ns} for r in rows]


def run_sweep(spec: Union[str, os.PathLike, dict, Sweep], output: Union[str, os.PathLike] = "results.parquet", *,
              address: Optional[str] = None, local: Optional[int] = None, progress: bool = True,
              limit: Optional[int] = None) -> dict[str, Any]:
    """Runs every point not already done into `output`; returns counts and wall time.

    address: a Ray cluster ("ray://head:10001" or "auto"); local: CPUs of the in-process Ray
    (default: all), 0 to run the points one after another in this process without Ray.
    limit: run at most this many of the remaining points (then stop, as an interruption would).
    """
    sw = spec if isinstance(spec, Sweep) else parse_spec(spec)
    exe = find_trnsim(sw.trnsim)
    points = [(point_id(sw.command, sw.args, p), p) for p in sw.points()]
    store = SweepStore(output, {"command": sw.command, "axes": list(sw.axes), "spec": sw.source,
                                "seed": sw.seed, "samples": sw.samples})
    done = store.done()
    todo = [(pid, p) for pid, p in dict(points).items() if pid not in done]
    if limit is not None:
        todo = todo[:limit]
    t0 = time.perf_counter()
    failed = 0
    timing: dict[str, float] = {"ray_start_s": 0.0}
    try:
        with Progress("sweep", total=len(todo), quiet=not progress) as prog:
            if local == 0 and address is None:
                for pid, p in todo:
                    rows = _stamp(run_point(exe, sw.command, sw.args, p, pid, sw.timeout_s, sw.env))
                    failed += rows[0]["status"] != "ok"
                    store.append(rows)
                    prog.advance()
            else:
                failed = _run_on_ray(sw, exe, todo, store, prog, address, local, timing)
    except KeyboardInterrupt:
        table = store.merge()  # what finished is kept; a re-run resumes from it
        raise SweepInterrupted(f"sweep interrupted: {table.num_rows} rows saved in {output}; run the same command "
                               f"again to resume") from None
    wall = time.perf_counter() - t0
    table = store.merge()
    return {"points": len(points), "skipped": sum(1 for pid, _ in points if pid in done),
            "ran": len(todo), "failed": failed, "rows": table.num_rows, "wall_s": wall, **timing, "output": str(Path(output))}


def _run_on_ray(sw: Sweep, exe: str, todo, store: SweepStore, prog: Progress, address, local,
                timing: dict[str, float]) -> int:
    t0 = time.perf_counter()
    import ray
    started_here = False
    if not ray.is_initialized():
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if address:
            try:
                ray.init(address=address, **kw)
            except Exception as e:  # ray raises ConnectionError, ValueError, RuntimeError, ...
                msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ConnectionError(f"--address {address}: cannot connect to the Ray cluster: {msg}") from None
        else:
            ray.init(num_cpus=local or os.cpu_count(), **kw)
        started_here = True
    timing["ray_start_s"] = time.perf_counter() - t0
    task = ray.remote(num_cpus=1, max_retries=0)(run_point)
    failed = 0
    buf: list[dict] = []
    try:
        pending = {task.remote(exe, sw.command, sw.args, p, pid, sw.timeout_s, sw.env): (pid, p) for pid, p in todo}
        last = time.monotonic()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=FLUSH_EVERY_S)
            for ref in ready:
                pid, p = pending.pop(ref)
                try:
                    rows = ray.get(ref)
                except Exception as e:  # a worker lost, not a failed point: record it, go on
                    rows = [{"point_id": pid, **_opts(p), "status": "error", "error": f"ray: {type(e).__name__}: {e}"}]
                failed += rows[0]["status"] != "ok"
                buf += _stamp(rows)
                prog.advance()
            if buf and (time.monotonic() - last >= FLUSH_EVERY_S or not pending):
                store.append(buf)
                buf, last = [], time.monotonic()
    finally:
        store.append(buf)  # an interruption keeps what had finished
        if started_here:
            ray.shutdown()
    return failed
