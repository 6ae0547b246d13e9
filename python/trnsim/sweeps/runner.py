"""Running a sweep's points as Ray tasks (a local Ray started in this process by default, or a
cluster by address), streaming finished points into the store; or one after another in this
process (`local=0`, the benchmark's baseline)."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Optional, Union

from trnsim.progress import Progress
from trnsim.sweeps.point import find_trnsim, run_point
from trnsim.sweeps.ray_run import run_on_ray
from trnsim.sweeps.spec import Sweep, parse_spec, point_id
from trnsim.sweeps.store import SweepStore


class SweepInterrupted(Exception):
    """Ctrl-C during a sweep: the finished points are saved, the message says how to resume."""


FLUSH_EVERY_S = 2.0  # at most this long between part files, so an interruption loses little


class _Sink:
    """Finished points' rows, stamped, counted and written to the store: the first at once (the
    output appears), then at most every FLUSH_EVERY_S (a part file is 4 ms of the driver's CPU, a
    tenth of a small point). Thread-safe: the driver's runner and the Ray loop both add."""

    def __init__(self, store: SweepStore, prog: Progress):
        self.store, self.prog = store, prog
        self.failed = 0
        self._buf: list[dict] = []
        self._last = -float("inf")
        self._lock = threading.Lock()

    def add(self, rows: list[dict]) -> None:
        ns = time.time_ns()
        with self._lock:
            self._buf += [{**r, "finished_ns": ns} for r in rows]
            self.failed += rows[0]["status"] != "ok"
            self.prog.advance()
            if time.monotonic() - self._last >= FLUSH_EVERY_S:
                self._flush()

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if self._buf:
            self.store.append(self._buf)
            self._buf = []
        self._last = time.monotonic()


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
    timing: dict[str, Any] = {"ray_start_s": 0.0}
    with Progress("sweep", total=len(todo), quiet=not progress) as prog:
        sink = _Sink(store, prog)
        try:
            if local == 0 and address is None:
                for pid, p in todo:
                    sink.add(run_point(exe, sw.command, sw.args, p, pid, sw.timeout_s, sw.env))
            else:
                run_on_ray(sw, exe, todo, sink, address, local, timing)
        except KeyboardInterrupt:
            sink.flush()
            table = store.merge()  # what finished is kept; a re-run resumes from it
            raise SweepInterrupted(f"sweep interrupted: {table.num_rows} rows saved in {output}; run the same "
                                   f"command again to resume") from None
        sink.flush()
    table = store.merge()
    wall = time.perf_counter() - t0
    return {"points": len(points), "skipped": sum(1 for pid, _ in points if pid in done),
            "ran": len(todo), "failed": sink.failed, "rows": table.num_rows, "wall_s": wall, **timing,
            "output": str(Path(output))}
