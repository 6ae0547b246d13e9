"""A 64-point sweep on a local Ray against the same points one after another in one process.

    PYTHONPATH=python .venv/bin/python bench/sweep_speedup.py [--command kernel|llm] [--cpus N] [--json]

Points: `trnsim kernel matmul` in functional mode (simulated and checked against the fp64
reference), 4 m x 2 k x 2 n x 2 dtypes x 2 chips; or (--command llm) `trnsim llm` over 2 models
x 4 tp x 4 batch x 2 input lengths, each point with a cold cost cache (the 70B layouts that do
not fit in HBM fail, as they should, in both runs). The Ray figure includes starting and
stopping Ray. Both runs must give the same simulated times, point for point. The machine's
load average is reported beside the figures: on a shared machine the speed-up depends on it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from trnsim.sweeps import query, run_sweep  # noqa: E402

SPECS = {
    "kernel": {"command": "kernel", "args": ["matmul"], "functional": True,
               "axes": {"m": [512, 1024, 1536, 2048], "k": [1024, 2048], "n": [512, 1024], "dtype": ["bf16", "fp32"],
                        "chip": ["trn1", "trn2"]}},
    # every point with its own cold cost cache ({cache} is a fresh folder per run), so that each one
    # measures its node costs in timing mode as a sweep over new models or systems does
    "llm": {"command": "llm", "system": "trn2.48xlarge", "output": 128,
            "env": {"XDG_CACHE_HOME": "{cache}/{point_id}"},
            "axes": {"model": ["llama-3.1-8b", "llama-3.1-70b"], "tp": [8, 16, 32, 64], "batch": [1, 8, 32, 64],
                     "input": [512, 4096]}},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--command", choices=sorted(SPECS), default="kernel")
    ap.add_argument("--cpus", type=int, default=os.cpu_count())
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        spec = json.loads(json.dumps(SPECS[args.command]).replace("{cache}", str(Path(d) / "seq-cache")))
        spec_ray = json.loads(json.dumps(SPECS[args.command]).replace("{cache}", str(Path(d) / "ray-cache")))
        load0 = os.getloadavg()
        seq = run_sweep(spec, Path(d) / "seq.parquet", local=0, progress=not args.json)
        load1 = os.getloadavg()
        par = run_sweep(spec_ray, Path(d) / "ray.parquet", local=args.cpus, progress=not args.json)
        load2 = os.getloadavg()
        q = "select point_id, coalesce(cast(time_s as varchar), error) v from results order by point_id, v"
        same = query(Path(d) / "seq.parquet", q)[1] == query(Path(d) / "ray.parquet", q)[1]
    out = {"points": seq["points"], "failed": seq["failed"] + par["failed"], "sequential_s": seq["wall_s"],
           "ray_s": par["wall_s"], "speedup": seq["wall_s"] / par["wall_s"], "ray_start_s": par["ray_start_s"],
           "speedup_after_ray_start": seq["wall_s"] / (par["wall_s"] - par["ray_start_s"]), "ray_cpus": args.cpus,
           "machine_cpus": os.cpu_count(), "identical_results": same,
           "loadavg_1min": {"before": load0[0], "after_sequential": load1[0], "after_ray": load2[0]}}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{out['points']} points of `trnsim {args.command}`: one after another {seq['wall_s']:.1f} s, "
              f"local Ray ({args.cpus} CPUs, start included) {par['wall_s']:.1f} s: {out['speedup']:.2f}x; "
              f"results identical: {same}; failed points: {out['failed']}")
        print(f"Ray took {par['ray_start_s']:.1f} s to start; after it: {out['speedup_after_ray_start']:.2f}x")
        print(f"load average (1 min) on this {os.cpu_count()}-core machine: before {load0[0]:.1f}, after the "
              f"sequential run {load1[0]:.1f}, after the Ray run {load2[0]:.1f}")
    return 0 if same else 1  # failed points (an llm layout that does not fit) are results too, in both runs


if __name__ == "__main__":
    sys.exit(main())
