"""Calibration: the GPU baseline's offline throughput vs TensorRT-LLM's published figures.

Rows of ../shared/reference/calibration/gpu_llm_throughput.csv (trtllm-bench throughput, offline
max load, FP8, Llama-3.1-8B and Llama-3.3-70B on H100/H200 SXM), simulated as the steady state of
the largest batch that fits KV memory and the iteration token budget, prefill amortised
(src/trnsim/workloads/offline_throughput.h). Module contract of bench/calibration.py: rows().

    PYTHONPATH=python .venv/bin/python bench/calibration_gpu.py
"""
from __future__ import annotations

import csv
import os
import statistics
import sys
from pathlib import Path

import trnsim

MODELS = {"Llama-3.1-8B": "llama-3.1-8b", "Llama-3.3-70B": "llama-3.3-70b"}  # configs/models presets
SYSTEMS = {"H100 SXM": "p5.48xlarge", "H200 SXM": "p5en.48xlarge"}


def csv_path() -> Path:
    env = os.environ.get("TRNSIM_REFERENCE")
    repo = Path(__file__).resolve().parents[1]
    for base in ([Path(env)] if env else []) + [repo.parent / "shared/reference", repo.parent.parent / "shared/reference"]:
        p = base / "calibration/gpu_llm_throughput.csv"
        if p.exists():
            return p
    raise FileNotFoundError("gpu_llm_throughput.csv not found; set TRNSIM_REFERENCE to the shared/reference folder")


def rows(progress=None) -> list[dict]:
    out = []
    with open(csv_path()) as f:
        published = list(csv.DictReader(f))
    for i, r in enumerate(published):
        tp, n_in, n_out = int(r["tp"]), int(r["input_tokens"]), int(r["output_tokens"])
        sim = trnsim.gpu_offline(MODELS[r["model"]], SYSTEMS[r["gpu"]], tp=tp, dtype=r["dtype"],
                                 input_tokens=n_in, output_tokens=n_out)
        pub = float(r["output_tokens_per_s"])
        out.append({"table": "gpu_llm", "row": f"{r['model']} {r['gpu']} tp{tp} {n_in}/{n_out}",
                    "metric": "output_tokens_per_s", "published": pub, "simulated": sim["output_tokens_per_s"],
                    "error": (sim["output_tokens_per_s"] - pub) / pub, "batch": sim["batch"],
                    "batch_limit": sim["batch_limit"]})
        if progress:
            progress(i + 1, len(published))
    return out


def main() -> int:
    rs = rows()
    print(f"{'row':<42} {'published':>10} {'simulated':>10} {'error':>8}  batch (limit)")
    for r in rs:
        print(f"{r['row']:<42} {r['published']:>10.0f} {r['simulated']:>10.0f} {r['error']:>+8.1%}  {r['batch']} ({r['batch_limit']})")
    med = statistics.median(abs(r["error"]) for r in rs)
    print(f"median |error| {med:.1%} over {len(rs)} rows (target <= 15%)")
    return 0 if med <= 0.15 else 1


if __name__ == "__main__":
    sys.exit(main())
