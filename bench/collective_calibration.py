"""Calibration run: simulated trn1 vs nccom-test's published 2-rank all-reduce (HARDWARE.md).

Prints size, published and simulated time, the error, and busbw in nccom-test's unit (GiB/s)
and ours (GB/s); exits 1 if any point leaves the issue's 20% band. The reasoning behind the
model and its two fitted constants is in docs/collectives.md.

    PYTHONPATH=python python bench/collective_calibration.py [--system trn1.32xlarge] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys

import trnsim

# nccom-test, all-reduce fp32, 2 ranks on trn1: (bytes, microseconds, busbw GiB/s).
PUBLISHED = [(1 << 10, 58, 0.02), (1 << 20, 68, 14.36), (16 << 20, 332, 47.06), (1 << 30, 18930, 52.83)]
BAND = 0.20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="trn1.32xlarge")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    sim = trnsim.collective("all-reduce", 2, a.system, [b for b, _, _ in PUBLISHED])
    rows = []
    for (size, us, gib), r in zip(PUBLISHED, sim):
        t = r["time_s"] * 1e6
        rows.append({"size_bytes": size, "published_us": us, "simulated_us": t, "error": t / us - 1,
                     "published_busbw_gibps": gib, "simulated_busbw_gibps": r["busbw_gbps"] * 1e9 / 2**30,
                     "algorithm": r["algorithm"]})
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"all-reduce fp32, 2 ranks (NeuronCores of one chip) on {a.system} vs nccom-test")
        print(f"{'size(B)':>12} {'published(us)':>14} {'simulated(us)':>14} {'error':>8} {'busbw pub/sim (GiB/s)':>24}")
        for r in rows:
            print(f"{r['size_bytes']:>12} {r['published_us']:>14.0f} {r['simulated_us']:>14.2f} {r['error']:>+8.1%} "
                  f"{r['published_busbw_gibps']:>11.2f} / {r['simulated_busbw_gibps']:<10.2f}")
    return 0 if all(abs(r["error"]) <= BAND for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
