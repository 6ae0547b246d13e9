"""Runs one published calibration row on trnsim: the model's cached ONNX file through
`trnsim run --timing-only --json` on the row's chip, batch and dtype, with one NeuronCore per
model copy for "Data Parallel" rows (`--cores 1`), and turns the report into the row's metrics.

Instances map to chips: inf2.* -> inf2, trn1.* -> trn1, trn2.* -> trn2. Data Parallel
throughput is (cores of the instance's chips) x batch / p50: every core runs its own copy.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CALIB = Path(os.environ.get("TRNSIM_CALIBRATION_DIR", "/work/shared/reference/calibration"))
if not CALIB.exists():
    CALIB = ROOT / "configs" / "calibration"
# NeuronCores per instance (each Data Parallel copy takes one).
INSTANCE_CORES = {"inf2.xlarge": 2, "trn1.2xlarge": 2}


def trnsim_cmd() -> str:
    return os.environ.get("TRNSIM_BIN", str(ROOT / "build" / "src" / "trnsim"))


def chip_of(instance: str) -> str:
    fam = instance.split(".")[0]
    if fam not in ("inf2", "trn1", "trn2", "trn3"):
        raise ValueError(f"calibration row: instance {instance!r} has no chip preset")
    return fam


def read_csv(name: str) -> list[dict]:
    with open(CALIB / name, newline="") as f:
        return list(csv.DictReader(f))


def simulate(onnx: Path, chip: str, batch: int, cores: int = 1, dtype: str = "bf16",
             extra: tuple[str, ...] = ()) -> dict:
    """The JSON report of a timing-only run."""
    cmd = [trnsim_cmd(), "run", str(onnx), "--chip", chip, "--dtype", dtype, "--timing-only",
           "--batch", str(batch), "--cores", str(cores), "--json", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
    return json.loads(r.stdout)


def row_results(row: dict, table: str, onnx: Path) -> list[dict]:
    """p50 and throughput rows (simulated vs published) of one CSV row."""
    batch = int(row["batch"])
    label = f"{row['model']} {row['instance']} b{batch}"
    if row["run_mode"] != "Data Parallel":
        raise ValueError(f"{label}: run mode {row['run_mode']!r} is not modelled")
    rep = simulate(onnx, chip_of(row["instance"]), batch, cores=1)
    p50_ms = rep["time_s"] * 1e3
    thr = INSTANCE_CORES[row["instance"]] * batch / rep["time_s"]
    out = []
    for metric, pub, sim in (("p50_ms", float(row["p50_ms"]), p50_ms),
                             ("inferences_per_s", float(row["inferences_per_s"]), thr)):
        out.append({"table": table, "row": label, "metric": metric, "published": pub,
                    "simulated": sim, "error": (sim - pub) / pub})
    return out


def rows_for(csv_name: str, table: str, onnx_of, progress=None) -> list[dict]:
    out = []
    src = read_csv(csv_name)
    for r in src:
        try:
            out += row_results(r, table, onnx_of(r["model"]))
        except Exception as e:  # one failing row is reported, not fatal to the table
            label = f"{r['model']} {r['instance']} b{r['batch']}"
            out.append({"table": table, "row": label, "metric": "p50_ms",
                        "published": float(r["p50_ms"]), "simulated": None, "error": None,
                        "failure": str(e)})
        if progress:
            progress(1, len(src))
    return out


def print_rows(rows: list[dict]) -> None:
    for r in rows:
        sim = "FAILED " + r.get("failure", "") if r["simulated"] is None else f"{r['simulated']:.4g}"
        err = "" if r["error"] is None else f"{100 * r['error']:+.1f}%"
        print(f"{r['table']:8} {r['row']:48} {r['metric']:17} {r['published']:10.4g} {sim:>10} {err}")
