"""Wall time and memory of `trnsim train` at scale (issue 14 targets).

- a Llama-2-70B step on 32 trn1.32xlarge nodes, cold (a fresh process), target < 5 s;
- a step of a 1,048,576-chip job (16,384 Trn2 UltraServers of 64 chips over EFA), target < 30 s;
- peak resident memory of the process, target < 2 GB.

Each case runs in its own subprocess with an empty cost cache (XDG_CACHE_HOME in a fresh temporary
folder), so "cold" includes every timing-mode node measurement; it reports wall time (import
included) and the child's peak RSS. ``python bench/train_scale.py``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CASES = {
    "llama-2-70b, 32 x trn1.32xlarge (512 chips), tp 32 pp 4 dp 8, ZeRO-1": dict(
        model="llama-2-70b", system="trn1.32xlarge", nodes=32, tp=32, pp=4, zero=1, global_batch=1024, seq=4096,
        recompute="full"),
    "llama-3.1-405b, 16,384 x trn2-ultraserver (1,048,576 chips), tp 16 pp 16 dp 16,384": dict(
        model="llama-3.1-405b", system="trn2-ultraserver", nodes=16384, tp=16, pp=16, zero=1, global_batch=262144,
        seq=8192, recompute="full", tokens=15e12),
}

CHILD = """
import json, sys, time, resource
t = time.perf_counter()
import trnsim
r = trnsim.train(**json.loads(sys.argv[1]))
wall = time.perf_counter() - t
print(json.dumps(dict(wall_s=wall, rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                      step_s=r["time_s"], chips=r["chips"], mfu_percent=r["mfu_percent"],
                      goodput_percent=r.get("train", {}).get("goodput_percent"))))
"""


def main() -> int:
    for name, req in CASES.items():
        with tempfile.TemporaryDirectory() as cache:  # cold: no measured node costs on disk
            env = dict(os.environ, XDG_CACHE_HOME=cache)
            out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(req)], capture_output=True, text=True,
                                 env=env)
        if out.returncode != 0:
            print(f"{name}: FAILED\n{out.stderr.strip()}")
            return 1
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name}\n  wall {r['wall_s']:.2f} s (with import), peak RSS {r['rss_bytes'] / 2**20:.0f} MiB, "
              f"{r['chips']} chips, step {r['step_s']:.3f} s, MFU {r['mfu_percent']:.1f}%"
              + (f", goodput {r['goodput_percent']:.1f}%" if r.get("goodput_percent") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
