"""How the GPU baseline's calibration rows and the MLPerf check move when one of its constants or
figures moves (issue 15): each variant rewrites copies of configs/gpus/{h100,h200,p5*}.yaml in a
temporary folder and reruns bench/calibration_gpu.py's rows and bench/gpu_published_check.py's
H100/H200 MLPerf rows against them. A what-if tool: nothing here changes the presets.

    PYTHONPATH=python .venv/bin/python bench/gpu_sensitivity.py
"""
from __future__ import annotations

import re
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import calibration_gpu as cg  # noqa: E402
import gpu_published_check as gp  # noqa: E402

FILES = ("h100.yaml", "h200.yaml", "p5.48xlarge.yaml", "p5en.48xlarge.yaml")
# (label, efficiency overrides, HBM capacity overrides, why)
VARIANTS = [
    ("as configured", {}, {}, "the presets"),
    ("HBM as nvidia-smi reports it", {}, {"h100.yaml": "81559 MiB", "h200.yaml": "143771 MiB"},
     "KV room: 81,559 / 143,771 MiB (recalled nvidia-smi figures), not 80 / 141 GB"),
    ("gemm_max 0.75", {"gemm_max": 0.75}, {}, "public large-M FP8 GEMM figure (DeepGEMM/cuBLAS, recalled)"),
    ("gemm_max 0.78", {"gemm_max": 0.78}, {}, "DeepGEMM README's best, 1,550 of 1,979 TFLOP/s (recalled)"),
    ("all-reduce at full NVLink", {"nvlink": 1.0, "collective_latency": "4 us"}, {}, "an upper bound on TP communication"),
    ("no launches, no iteration overhead", {"step_overhead": "0 us", "kernel_launch": "0 us"}, {}, "an upper bound"),
]


def variant_configs(folder: Path, efficiency: dict, hbm: dict) -> None:
    for f in FILES:
        t = (REPO / "configs/gpus" / f).read_text()
        for k, v in efficiency.items():
            t = re.sub(rf"^(\s+{k}:\s*)[^#\n]+", rf"\g<1>{v} ", t, flags=re.M)
        if f in hbm:
            t = re.sub(r"capacity: [^#\n]+", f"capacity: {hbm[f]} ", t)
        t = re.sub(r"^gpu: (\w+)", r"gpu: ./\1.yaml", t, flags=re.M)  # the GPU file beside the system file
        (folder / f).write_text(t)


def evaluate(efficiency: dict, hbm: dict) -> dict:
    systems, throughput = dict(cg.SYSTEMS), list(gp.THROUGHPUT)
    with tempfile.TemporaryDirectory() as d:
        variant_configs(Path(d), efficiency, hbm)
        try:
            cg.SYSTEMS = {gpu: f"{d}/{name}.yaml" for gpu, name in systems.items()}
            gp.THROUGHPUT = [t[:2] + (f"{d}/{t[2]}.yaml",) + t[3:] for t in throughput if f"{t[2]}.yaml" in FILES]
            cal, mlperf = cg.rows(), gp.throughput_rows()
        finally:
            cg.SYSTEMS, gp.THROUGHPUT = systems, throughput
    errors = [abs(r["error"]) for r in cal]
    worst = max(cal, key=lambda r: abs(r["error"]))
    return {"median_abs_error": statistics.median(errors), "worst_error": worst["error"], "worst_row": worst["row"],
            "rows_over_15pct": sum(e > 0.15 for e in errors),
            "mlperf": [{"row": r["row"], "error": r["error"], "batch": r["batch"]} for r in mlperf]}


def main() -> None:
    print(f"{'variant':<36} {'cal median':>10} {'worst':>8} {'>15%':>5}  MLPerf errors at {gp.INPUT}/{gp.OUTPUT} (batch)")
    for label, eff, hbm, why in VARIANTS:
        r = evaluate(eff, hbm)
        ml = "  ".join(f"{m['row'].split()[2]} {m['error']:+.1%} ({m['batch']})" for m in r["mlperf"])
        print(f"{label:<36} {r['median_abs_error']:>10.1%} {r['worst_error']:>+8.1%} {r['rows_over_15pct']:>5}  {ml}")
        print(f"{'':<36} {why}")


if __name__ == "__main__":
    main()
