"""DVFS sweep: energy vs latency of one kernel across the chip's operating points (a sweep list of
`trnsim kernel --json` results, kind "sweep" rows). Lower clocks save dynamic energy (V^2) but
stretch the run, so static energy grows: the curve shows where the energy-optimal point lies.

    PYTHONPATH=python .venv/bin/python bench/dvfs_sweep.py [--chip trn2] [--m 4096 --n 4096 --k 4096] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def trnsim_bin() -> str:
    return os.environ.get("TRNSIM_BIN", str(ROOT / "build" / "src" / "trnsim"))


def point(chip: str, m: int, n: int, k: int, scale: float) -> dict:
    out = subprocess.run([trnsim_bin(), "kernel", "matmul", "--chip", chip, "--m", str(m), "--n", str(n), "--k", str(k),
                          "--timing-only", "--clock-scale", str(scale), "--json"], capture_output=True, text=True, check=True)
    j = json.loads(out.stdout)
    return {"clock_scale": scale, "voltage_scale": j["voltage_scale"], "time_s": j["time_s"], "energy_j": j["energy_j"],
            "average_power_w": j["average_power_w"], "static_j": j["energy_by_unit_j"]["static"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chip", default="trn2")
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = [point(a.chip, a.m, a.n, a.k, s) for s in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)]
    if a.json:
        print(json.dumps([{"kind": "sweep", **r} for r in rows], indent=2))
        return 0
    print(f"matmul {a.m}x{a.k}x{a.n} bf16 on one core of {a.chip}")
    print(f"{'clock':>6} {'voltage':>8} {'time (us)':>10} {'energy (mJ)':>12} {'static (mJ)':>12} {'power (W)':>10}")
    for r in rows:
        print(f"{r['clock_scale']:>6.2f} {r['voltage_scale']:>8.3f} {r['time_s'] * 1e6:>10.1f} {r['energy_j'] * 1e3:>12.2f} "
              f"{r['static_j'] * 1e3:>12.2f} {r['average_power_w']:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
