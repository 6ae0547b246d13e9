"""The 64 points of `bench/sweep_speedup.py --command llm`, N at a time on one fresh cost cache:
how much of their time the points spend blocked (waiting for a shape another point is measuring).

    PYTHONPATH=python .venv/bin/python bench/cost_cache_sharing.py [--at-once 1,2] [--trnsim EXE] [--json]

Each point's process is sampled every 2 ms from /proc/PID/schedstat: its CPU time, its time
waiting for a CPU (the machine's load: other engineers' builds here) and the rest, its time
blocked (on a cache key's lock; a few ms per point to start and exit). On an idle machine the
run would take about (CPU + blocked) / N: that estimate does not depend on the load the way the
wall time does. Compare two builds with --trnsim (e.g. one without the cost plan).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sweep_speedup import SPECS  # noqa: E402  (sets up sys.path for trnsim too)

from trnsim.sweeps.point import command_line, find_trnsim  # noqa: E402


def _points() -> list[dict]:
    spec = SPECS["llm"]
    fixed = {k: v for k, v in spec.items() if k not in ("command", "env", "axes")}
    axes = spec["axes"]
    return [{**fixed, **dict(zip(axes, combo))} for combo in itertools.product(*axes.values())]


def _sample(pid: int):
    """(ns on a CPU, ns waiting for one) of a running process; None once it is gone."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            run_ns, wait_ns = f.read().split()[:2]
        return int(run_ns), int(wait_ns)
    except (OSError, ValueError):
        return None


def run(exe: str, at_once: int) -> dict:
    todo, stats, lock = list(_points()), [], threading.Lock()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)

        def lane() -> None:
            while True:
                with lock:
                    if not todo:
                        return
                    p = todo.pop(0)
                t0 = time.perf_counter()
                proc = subprocess.Popen(command_line(exe, "llm", [], p), stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env=env)
                last = (0, 0)
                while proc.poll() is None:
                    last = _sample(proc.pid) or last
                    time.sleep(0.002)
                with lock:
                    stats.append((time.perf_counter() - t0, last[0] / 1e9, last[1] / 1e9))

        load0, t0 = os.getloadavg()[0], time.perf_counter()
        lanes = [threading.Thread(target=lane) for _ in range(at_once)]
        for t in lanes:
            t.start()
        for t in lanes:
            t.join()
        wall = time.perf_counter() - t0
    points_wall, cpu, waiting = (sum(s[i] for s in stats) for i in range(3))
    blocked = max(0.0, points_wall - cpu - waiting)
    return {"at_once": at_once, "points": len(stats), "wall_s": wall, "cpu_s": cpu, "waiting_for_cpu_s": waiting,
            "blocked_s": blocked, "idle_machine_estimate_s": (cpu + blocked) / at_once,
            "loadavg_1min": [load0, os.getloadavg()[0]]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--at-once", default="1,2", help="points at a time, comma-separated")
    ap.add_argument("--trnsim", default=None, help="the trnsim command (default: this tree's)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    exe = find_trnsim(args.trnsim)
    out = [run(exe, int(n)) for n in args.at_once.split(",")]
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for o in out:
        print(f"{o['points']} llm points {o['at_once']} at a time on one fresh cache ({exe}): wall {o['wall_s']:.1f} s; "
              f"CPU {o['cpu_s']:.2f} s, waiting for a CPU {o['waiting_for_cpu_s']:.1f} s, blocked {o['blocked_s']:.2f} s; "
              f"idle-machine estimate {o['idle_machine_estimate_s']:.2f} s; load {o['loadavg_1min'][0]:.1f} -> "
              f"{o['loadavg_1min'][1]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
