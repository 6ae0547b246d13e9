"""A 64-point sweep on a local Ray against the same points one after another in one process.

    PYTHONPATH=python .venv/bin/python bench/sweep_speedup.py [--command kernel|llm]
        [--cache cold,cold-point,warm] [--cpus N] [--json]

Points: `trnsim kernel matmul` in functional mode (simulated and checked against the fp64
reference), 4 m x 2 k x 2 n x 2 dtypes x 2 chips; or (--command llm) `trnsim llm` over 2 models
x 4 tp x 4 batch x 2 input lengths (the 70B layouts that do not fit in HBM fail, as they
should, in both runs); or (--command llm-power, a heavier llm sweep) 2 models x 2 tp x 2 batch x
2 input lengths x 4 power caps per chip, 512 tokens out. The Ray figure includes starting and stopping Ray. Both runs must give
the same simulated times, point for point.

The llm cost cache ($XDG_CACHE_HOME/trnsim) is in the same state for both runs, in each of:
  cold        each run its own fresh cache folder, shared by its points: a user's first sweep
              (points measured by one process are read from the file by later ones)
  cold-point  each point its own fresh folder: nothing shared, as a sweep over new models or
              systems each of which measures its own kernel shapes
  warm        each run its own copy of a cache filled by an untimed run of the same points
The machine's load average is reported beside the figures: on a shared machine the wall-clock
speed-up depends on it; the CPU-second figures do not.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from trnsim.sweeps import query, run_sweep  # noqa: E402

SPECS = {
    "kernel": {"command": "kernel", "args": ["matmul"], "functional": True,
               "axes": {"m": [512, 1024, 1536, 2048], "k": [1024, 2048], "n": [512, 1024], "dtype": ["bf16", "fp32"],
                        "chip": ["trn1", "trn2"]}},
    # {cache}: the run's cost-cache folder (see --cache)
    "llm": {"command": "llm", "system": "trn2.48xlarge", "output": 128,
            "env": {"XDG_CACHE_HOME": "{cache}"},
            "axes": {"model": ["llama-3.1-8b", "llama-3.1-70b"], "tp": [8, 16, 32, 64], "batch": [1, 8, 32, 64],
                     "input": [512, 4096]}},
    # A heavier llm sweep, added (sweep3) beside the one above, which a shared cache makes shorter
    # than Ray's start: a buyer's power-cap question. Each capped point searches the clock that
    # fits the cap, and every clock has its own cost-cache scope (its shapes measured anew).
    "llm-power": {"command": "llm", "system": "trn2.48xlarge", "output": 512,
                  "env": {"XDG_CACHE_HOME": "{cache}"},
                  "axes": {"model": ["llama-3.1-8b", "llama-3.1-70b"], "tp": [16, 32], "batch": [8, 32],
                           "input": [2048, 8192], "power_cap": [150, 200, 250, 300]}},
}


class _HelperCPU(threading.Thread):
    """CPU seconds of the processes this one starts other than the points (Ray's: GCS, raylet,
    agents, workers), read from /proc every 0.2 s while a run goes on; the points' own CPU time is
    exact, in the results' cpu_s column. This thread's own CPU time is left out of the driver's."""

    def __init__(self):
        super().__init__(daemon=True)
        self.seen: dict[int, float] = {}
        self.own_s = 0.0
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.wait(0.2):
            self._sample()
        self._sample()
        self.own_s = time.thread_time()

    def _sample(self) -> None:
        stats = {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    s = f.read()
            except (OSError, ValueError):
                continue
            rest = s[s.rindex(")") + 2:].split()
            stats[int(d)] = (int(rest[1]), s[s.index("(") + 1:s.rindex(")")], (int(rest[11]) + int(rest[12])) / HZ)
        tree, front = set(), [os.getpid()]
        while front:
            parent = front.pop()
            kids = [pid for pid, (ppid, _, _) in stats.items() if ppid == parent and pid not in tree]
            tree.update(kids)
            front += kids
        for pid in tree:
            if stats[pid][1] != "trnsim":  # a point's process: counted exactly in cpu_s
                self.seen[pid] = stats[pid][2]


HZ = os.sysconf("SC_CLK_TCK")


def _run(spec: dict, out: Path, local: int, progress: bool) -> dict:
    load0 = os.getloadavg()[0]
    helpers = _HelperCPU()
    helpers.start()
    me0 = resource.getrusage(resource.RUSAGE_SELF)
    r = run_sweep(spec, out, local=local, progress=progress)
    me1 = resource.getrusage(resource.RUSAGE_SELF)
    helpers.halt.set()
    helpers.join()
    points_cpu = query(out, "select sum(cpu_s) from results")[1][0][0]
    driver = me1.ru_utime + me1.ru_stime - me0.ru_utime - me0.ru_stime - helpers.own_s
    return {**r, "points_cpu_s": points_cpu, "driver_cpu_s": driver, "ray_cpu_s": sum(helpers.seen.values()),
            "cpu_s": points_cpu + driver + sum(helpers.seen.values()), "load": [load0, os.getloadavg()[0]]}


def _spec(command: str, cache: Path) -> dict:
    return json.loads(json.dumps(SPECS[command]).replace("{cache}", str(cache)))


def _compare(command: str, mode: str, d: Path, cpus: int, progress: bool) -> dict:
    """The sequential and the Ray run of the same points, with the cost cache as `mode` says."""
    caches = {"seq": d / mode / "seq-cache", "ray": d / mode / "ray-cache"}
    if mode == "cold-point":
        caches = {k: v / "{point_id}" for k, v in caches.items()}
    elif mode == "warm":  # one untimed run fills a cache; each timed run gets its own copy
        fill = d / mode / "fill-cache"
        run_sweep(_spec(command, fill), d / mode / "fill.parquet", local=0, progress=False)
        for c in caches.values():
            shutil.copytree(fill, c)
    seq = _run(_spec(command, caches["seq"]), d / mode / "seq.parquet", 0, progress)
    par = _run(_spec(command, caches["ray"]), d / mode / "ray.parquet", cpus, progress)
    q = "select point_id, coalesce(cast(time_s as varchar), error) v from results order by point_id, v"
    same = query(d / mode / "seq.parquet", q)[1] == query(d / mode / "ray.parquet", q)[1]
    return {"cache": mode, "ray_at_once": os.environ.get("TRNSIM_SWEEP_RAY_WORTH_S") == "0", "points": seq["points"], "failed_per_run": {"sequential": seq["failed"], "ray": par["failed"]},
            "sequential_s": seq["wall_s"], "ray_s": par["wall_s"], "speedup": seq["wall_s"] / par["wall_s"],
            "ray_started": par["ray_started"], "ray_start_s": par["ray_start_s"], "driver_points": par.get("driver_points", 0),
            "ray_points": par.get("ray_points", 0), "ray_cpus": cpus, "machine_cpus": os.cpu_count(),
            "identical_results": same,
            # load-independent: CPU time of the points alone (the same work in both runs) and of the
            # whole run (the driver, the points, and in the Ray run every Ray process)
            "points_cpu_s": {"sequential": seq["points_cpu_s"], "ray": par["points_cpu_s"]},
            "run_cpu_s": {"sequential": seq["cpu_s"], "ray": par["cpu_s"]},
            "driver_cpu_s": {"sequential": seq["driver_cpu_s"], "ray": par["driver_cpu_s"]},
            "ray_processes_cpu_s": par["ray_cpu_s"],
            # the speed-up if the Ray run's CPU time were spread perfectly over its CPUs, with no idle
            # time: an upper bound that the load does not move
            "cpu_bound_speedup": seq["cpu_s"] / (par["cpu_s"] / min(cpus, os.cpu_count())),
            "loadavg_1min": {"before_sequential": seq["load"][0], "after_sequential": seq["load"][1],
                             "before_ray": par["load"][0], "after_ray": par["load"][1]}}


def _print(command: str, o: dict) -> None:
    pc, rc, dc, lo = o["points_cpu_s"], o["run_cpu_s"], o["driver_cpu_s"], o["loadavg_1min"]
    print(f"[cache {o['cache']}] {o['points']} points of `trnsim {SPECS[command]['command']}` ({command}): one after another {o['sequential_s']:.1f} s, "
          f"local Ray ({o['ray_cpus']} CPUs, start and stop included) {o['ray_s']:.1f} s: {o['speedup']:.2f}x; "
          f"results identical: {o['identical_results']}; failed points per run: "
          f"{o['failed_per_run']['sequential']} and {o['failed_per_run']['ray']}")
    if o["ray_started"]:
        print(f"  Ray took {o['ray_start_s']:.1f} s to start; this process ran {o['driver_points']} points, Ray {o['ray_points']}")
    else:
        print(f"  Ray was not started (the sweep was shorter than its start): this process ran all {o['driver_points']} "
              f"points, {o['ray_cpus']} at once")
    print(f"  CPU time: the points {pc['sequential']:.1f} s and {pc['ray']:.1f} s; the whole run {rc['sequential']:.1f} s "
          f"and {rc['ray']:.1f} s (this process {dc['sequential']:.1f} s and {dc['ray']:.1f} s, Ray's processes "
          f"{o['ray_processes_cpu_s']:.1f} s); speed-up bound by CPU time: {o['cpu_bound_speedup']:.2f}x")
    print(f"  load average (1 min) on this {os.cpu_count()}-core machine: sequential run {lo['before_sequential']:.1f}"
          f" -> {lo['after_sequential']:.1f}, Ray run {lo['before_ray']:.1f} -> {lo['after_ray']:.1f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--command", choices=sorted(SPECS), default="kernel")
    ap.add_argument("--cache", default="cold,cold-point,warm",
                    help="cost-cache states to measure, comma-separated (llm; see above)")
    ap.add_argument("--cpus", type=int, default=os.cpu_count())
    ap.add_argument("--ray-at-once", action="store_true",
                    help="start the local Ray at once, even for a sweep shorter than its start (TRNSIM_SWEEP_RAY_WORTH_S=0)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    modes = args.cache.split(",") if args.command.startswith("llm") else ["none"]
    if bad := set(modes) - {"cold", "cold-point", "warm", "none"}:
        ap.error(f"--cache: unknown state {sorted(bad)[0]} (expected cold, cold-point or warm)")
    if args.ray_at_once:
        os.environ["TRNSIM_SWEEP_RAY_WORTH_S"] = "0"
    with tempfile.TemporaryDirectory() as d:
        out = [_compare(args.command, m, Path(d), args.cpus, not args.json) for m in modes]
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for o in out:
            _print(args.command, o)
    # failed points (an llm layout that does not fit) are results too, in both runs
    return 0 if all(o["identical_results"] for o in out) else 1


if __name__ == "__main__":
    sys.exit(main())
