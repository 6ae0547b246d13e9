"""Calibration table `encoder` (encoder.csv): ALBERT-base, DistilBERT, ELECTRA-base and
RoBERTa-large, seq 128, BF16 matmuls, one model copy per NeuronCore, on inf2.xlarge and
trn1.2xlarge; simulated p50 and throughput against AWS's published figures.

    PYTHONPATH=python .venv/bin/python bench/calibration_encoder.py
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_models  # noqa: E402
import simulate_row  # noqa: E402

TABLE = "encoder"


def rows(progress=None) -> list[dict]:
    return simulate_row.rows_for("encoder.csv", TABLE, published_models.onnx_path, progress)


if __name__ == "__main__":
    simulate_row.print_rows(rows())
