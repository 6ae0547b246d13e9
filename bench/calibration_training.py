"""Calibration of `trnsim train` against Neuron's published training throughput.

Rows: ../shared/reference/calibration/training.csv (GPT-3 23B/46B/175B, Llama-2-7B, BERT-Large
on trn1.32xlarge nodes). Each row runs with its published layout (nodes, tp, pp, dp, ZeRO,
micro-batch, global batch, sequence, precision). The CSV does not say which activation
recomputation the runs used; each row takes its framework's setting (RECOMPUTE below: the
NeMo-Megatron GPT runs with full activation checkpointing, NeuronX Distributed's Llama-2
pretraining with selective checkpointing, the BERT phase-1 run without), as read from the
frameworks' Neuron example scripts -- a reading to verify, stated in docs/training.md, not a
fit. TRNSIM_RECOMPUTE=fit instead takes the least recomputation that fits in memory.

Module contract of bench/calibration.py: ``rows(progress=None) -> list[dict]`` with keys
table, row, metric, published, simulated, error. Runs alone: ``python bench/calibration_training.py``.
"""
from __future__ import annotations

import csv
import os
import statistics
import sys

import trnsim

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.environ.get("TRNSIM_TRAINING_CSV",
                     os.path.join(HERE, "..", "..", "..", "shared", "reference", "calibration", "training.csv"))
if not os.path.exists(CSV):
    CSV = "/work/shared/reference/calibration/training.csv"

PRESETS = {"GPT3-23B": "gpt3-23b", "GPT3-46B": "gpt3-46b", "GPT3-175B": "gpt3-175b", "Llama2-7B": "llama-2-7b",
           "BERT-Large phase 1": "bert-large"}


def _request(r: dict) -> dict:
    zero = r["zero"].strip()
    return dict(model=PRESETS[r["model"]], system=r["instance"], nodes=int(r["nodes"]), tp=int(r["tp"]),
                pp=int(r["pp"]), dp=int(r["dp"]), zero=int(zero.split("-")[1]) if zero else 0,
                micro_batch=int(r["microbatch"]), global_batch=int(r["global_batch"]), seq=int(r["seq"]),
                precision="bf16-sr" if "SR" in r["dtype"] else "fp32-master", optimizer=r["optimizer"].lower())


# Per framework (the rows' "source" runs): NeMo-Megatron GPT, NxD Llama, Hugging Face BERT.
RECOMPUTE = {"GPT3-23B": "full", "GPT3-46B": "full", "GPT3-175B": "full", "Llama2-7B": "selective",
             "BERT-Large phase 1": "none"}


def simulate(r: dict) -> dict:
    if os.environ.get("TRNSIM_RECOMPUTE") != "fit":
        return trnsim.train(**_request(r), recompute=RECOMPUTE[r["model"]])
    last = None
    for recompute in ("none", "selective", "full"):
        try:
            return trnsim.train(**_request(r), recompute=recompute)
        except trnsim.ShapeError as e:
            last = e
    raise last


def rows(progress=None) -> list[dict]:
    out = []
    with open(CSV) as f:
        published = list(csv.DictReader(f))
    for r in published:
        res = simulate(r)
        sim = res["sequences_per_s"]
        pub = float(r["seq_per_s"])
        label = (f"{r['model']} {r['nodes']}x{r['instance']} tp{r['tp']} pp{r['pp']} dp{r['dp']} "
                 f"(recompute {res['layout']['recompute']}; MFU {res['mfu_percent']:.1f}% vs {r['mfu_percent']}%)")
        out.append(dict(table="training", row=label, metric="seq_per_s", published=pub, simulated=sim,
                        error=(sim - pub) / pub))
        if progress:
            progress(out[-1])
    return out


if __name__ == "__main__":
    got = rows()
    for x in got:
        print(f"{x['row']:<100} published {x['published']:>9.2f} simulated {x['simulated']:>9.2f} "
              f"error {x['error'] * 100:+6.1f}%")
    errs = [abs(x["error"]) for x in got]
    print(f"median |error| {statistics.median(errs) * 100:.1f}%, worst {max(errs) * 100:.1f}%")
    sys.exit(0)
