"""Calibration: simulated vs published LLM decoding (TTFT and TPOT p50) on trn1 and inf2.

Rows of ``/work/shared/reference/calibration/decoder.csv`` (AWS's transformers-neuronx runs of
Llama-2-7B, Llama-2-70B and Llama-3-8B on trn1.32xlarge at TP 32 and inf2.48xlarge at TP 24)
through ``trnsim.llm``. Module contract of ``bench/calibration.py``: ``rows(progress)`` returns
one dict per published figure (table, row, metric, published, simulated, error). Run alone, it
prints the rows and the median absolute error:

    PYTHONPATH=python python bench/calibration_decoder.py [--csv PATH] [--json]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys

import trnsim

CSV = os.environ.get("TRNSIM_DECODER_CSV", "/work/shared/reference/calibration/decoder.csv")
MODELS = {"llama-2-7b": "llama-2-7b", "llama-2-70b": "llama-2-70b", "llama-3-8b": "llama-3-8b"}


def _published_rows(path: str) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    seen, out = set(), []
    for r in rows:  # the latency and throughput tables repeat some rows: keep each once
        key = (r["model"], r["instance"], r["tp"], r["batch"], r["input_tokens"], r["output_tokens"], r["weights"])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def rows(progress=None, path: str = CSV) -> list[dict]:
    out = []
    published = _published_rows(path)
    for i, r in enumerate(published):
        model = MODELS[r["model"].lower()]
        sim = trnsim.llm(model, r["instance"], int(r["tp"]), batch=int(r["batch"]), input=int(r["input_tokens"]),
                         output=int(r["output_tokens"]), weights=r["weights"], seq_len=int(r["seq"]))
        label = f"{r['model']} {r['instance']} tp{r['tp']} b{r['batch']} {r['input_tokens']}/{r['output_tokens']} {r['weights']}"
        for metric, field in (("ttft_p50_ms", "ttft_s"), ("tpot_p50_ms", "tpot_s")):
            pub = float(r[metric])
            simulated = sim[field] * 1e3
            out.append({"table": "decoder", "row": label, "metric": metric, "published": pub, "simulated": simulated,
                        "error": (simulated - pub) / pub})
        if progress:
            progress(i + 1, len(published))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=CSV)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rs = rows(path=a.csv)
    if a.json:
        print(json.dumps(rs, indent=2))
        return 0
    print(f"{'row':<62} {'metric':<12} {'published':>10} {'simulated':>10} {'error':>8}")
    for r in rs:
        print(f"{r['row']:<62} {r['metric']:<12} {r['published']:>10.2f} {r['simulated']:>10.2f} {r['error']:>+8.1%}")
    errs = [abs(r["error"]) for r in rs]
    for m in ("ttft_p50_ms", "tpot_p50_ms"):
        e = [abs(r["error"]) for r in rs if r["metric"] == m]
        print(f"{m}: median |error| {statistics.median(e):.1%}, worst {max(e):.1%} over {len(e)} rows")
    print(f"all: median |error| {statistics.median(errs):.1%}, worst {max(errs):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
