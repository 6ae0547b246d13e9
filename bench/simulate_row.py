"""Runs one published calibration row on trnsim: the model's cached ONNX file through
`trnsim run --timing-only --json` on the row's chip, batch and dtype, with one NeuronCore per
model copy for "Data Parallel" rows (`--cores 1`), and turns the report into the row's metrics.

The load is an input of the experiment, read off the published pair: AWS's harness keeps a fixed
number of requests in flight, and by Little's law that number is throughput x p50 / batch (1 for
the latency files' CNN rows, 2 for the encoder rows, 4 for the throughput files' vision rows).
The row runs under that load (`--in-flight N`, copies round-robin over the chip's cores) and its
p50 and throughput both come from that one simulation (docs/design-notes.md, "in-flight load").

Instances map to chips: inf2.* -> inf2, trn1.* -> trn1, trn2.* -> trn2; the rows' instances have
one chip each (INSTANCE_CHIPS), so the chip's cores are the instance's.
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
# Chips per instance: a load spread over several chips is not modelled by `run --in-flight`.
INSTANCE_CHIPS = {"inf2.xlarge": 1, "trn1.2xlarge": 1}


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


def in_flight_of(row: dict) -> int:
    """Requests the published run kept in flight, by Little's law: completions per second x
    p50 / batch, rounded (the measured figures land within 2% of an integer)."""
    n = float(row["inferences_per_s"]) * float(row["p50_ms"]) * 1e-3 / int(row["batch"])
    if round(n) < 1:
        raise ValueError(f"{row['model']} b{row['batch']}: throughput x p50 / batch = {n:.3f}: fewer than one request in flight")
    return int(round(n))


def row_results(row: dict, table: str, onnx: Path) -> list[dict]:
    """p50 and throughput rows (simulated vs published) of one CSV row."""
    batch = int(row["batch"])
    n = in_flight_of(row)
    label = f"{row['model']} {row['instance']} b{batch} in-flight {n}"
    if row["run_mode"] != "Data Parallel":
        raise ValueError(f"{label}: run mode {row['run_mode']!r} is not modelled")
    if INSTANCE_CHIPS.get(row["instance"]) != 1:
        raise ValueError(f"{label}: instance {row['instance']!r} is not a one-chip instance")
    load = simulate(onnx, chip_of(row["instance"]), batch, cores=1, extra=("--in-flight", str(n)))["load"]
    p50_ms = load["p50_latency_s"] * 1e3
    thr = load["inferences_per_s"]
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
