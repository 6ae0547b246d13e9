"""Calibration table `vision` (vision.csv): ResNet-18, ResNet-50, VGG-16 and ViT-base
(224x224 images), BF16 matmuls, one model copy per NeuronCore, on inf2.xlarge;
simulated p50 and throughput against AWS's published figures.

    PYTHONPATH=python .venv/bin/python bench/calibration_vision.py
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published_models  # noqa: E402
import simulate_row  # noqa: E402

TABLE = "vision"


def rows(progress=None) -> list[dict]:
    return simulate_row.rows_for("vision.csv", TABLE, published_models.onnx_path, progress)


if __name__ == "__main__":
    simulate_row.print_rows(rows())
