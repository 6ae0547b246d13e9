"""Models nobody tuned for (issue 4): the nine CNN graphs shipped inside the onnx wheel
(onnx/backend/test/data/light/light_*.onnx, 1x3x224x224) through trnsim.compile_onnx, fp32
policy on trn2. Each must match onnxruntime or be refused with an UnsupportedError that names
an op; MATCHING lists those that match, so a regression (a model that stops matching, or
starts being refused) fails.

Reference and tolerance: onnxruntime (CPU) on the same seeded input; on every output
max |got - ref| / max |ref| < 1e-4 (bench/untuned_models.py: REL_TO_MAX_TOL; the command-line
test below also needs run_check.py's elementwise fp32 tolerance |d| <= 1e-4 + 1e-3 |ref|).

The light files hold every weight as ConstantOfShape(0.02); the functional checks also run
with seeded random weights (bench/untuned_models.py --weights random) so values vary through
every layer. Models whose functional simulation takes more than a few seconds on the 2-core
development machine (TIMING_ONLY) are compiled and simulated in timing mode here; the full
functional check of all nine is `python bench/untuned_models.py` (and --weights random).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import trnsim

pytest.importorskip("onnx", reason="onnx is not installed (pip install -r requirements.txt)")
pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install -r requirements.txt)")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import untuned_models as bench  # noqa: E402

pytestmark = pytest.mark.skipif(
    not hasattr(trnsim, "compile_onnx"),
    reason="trnsim.compile_onnx is missing: the graph compiler (issue 4) is not built into trnsim._core")

# Measured 2026-11-22 (bench/untuned_models.py, light and random weights): all nine match.
MATCHING = set(bench.MODELS)
# Functional simulation slower than a unit test should be: timing mode here, functional in the bench.
TIMING_ONLY = {"densenet121", "vgg19"}
FUNCTIONAL = [m for m in bench.MODELS if m not in TIMING_ONLY]


def _assert_match_or_named_refusal(row: dict) -> None:
    if row["result"] == "unsupported":
        assert row["detail"].startswith("unsupported: op "), row["detail"]
        assert row["model"] not in MATCHING, f"{row['model']} used to match, now: {row['detail']}"
        return
    assert row["result"] == "match", json.dumps(row, indent=1, default=str)
    assert row["max_abs_over_max"] < bench.REL_TO_MAX_TOL


@pytest.mark.parametrize("model", FUNCTIONAL)
def test_light_model_matches_onnxruntime(model):
    row = bench.check_model(model, "light")
    _assert_match_or_named_refusal(row)


@pytest.mark.parametrize("model", ["squeezenet", "shufflenet", "inception_v1"])
def test_light_model_with_random_weights_matches_onnxruntime(model):
    row = bench.check_model(model, "random")
    _assert_match_or_named_refusal(row)
    # Random weights must make the check see varied values, not a uniform softmax.
    assert all(o["ref_max_abs_value"] > 2e-3 for o in row["outputs"]), row["outputs"]


@pytest.mark.parametrize("model", sorted(TIMING_ONLY))
def test_slow_light_model_compiles_and_runs_in_timing_mode(model):
    row = bench.check_model(model, "light", mode="timing")
    if row["result"] == "unsupported":
        _assert_match_or_named_refusal(row)
        return
    assert row["result"] == "timing-only", row
    assert row["simulated_time_s"] > 0


def test_matching_list_is_the_measured_one():
    """Every model is either in MATCHING or must be refused with an op named: the list only
    grows (a model removed from it must be refused, see the parametrised tests)."""
    assert MATCHING <= set(bench.MODELS)
    assert set(FUNCTIONAL) | TIMING_ONLY == set(bench.MODELS)


def test_python_m_trnsim_run_check_on_a_light_model(tmp_path):
    """The command line of the issue: `python -m trnsim run MODEL --check --json` exits 0 and
    reports every output as passed."""
    path = bench.light_dir() / "light_squeezenet.onnx"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-m", "trnsim", "run", str(path), "--check", "--json"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["check"] and all(c["passed"] for c in out["check"]), out["check"]
    assert all(np.isfinite(c["max_abs_over_max"]) and c["max_abs_over_max"] < bench.REL_TO_MAX_TOL
               for c in out["check"])


def test_floor_ceil_round_at_run_time_match_numpy():
    """The run-time kernels (VectorE fmod arithmetic, not host folding) on ties, negatives, tiny
    fractions, integers beyond 2^23, +-inf and NaN: exact equality with numpy (np.round halves
    to even as ONNX Round does)."""
    from onnx import TensorProto, helper
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 2.3, -2.7, 0.0, -0.0,
                  1e-30, -1e-30, 8388609.0, -8388609.0, 3e9, 1234.5, -1234.5, 7.0, np.inf, -np.inf,
                  np.nan, 8388607.5, -8388607.5, 4194304.5], dtype=np.float32)
    x = np.tile(x, 11)  # 264 elements: more than one tile of 128 partitions
    nodes = [helper.make_node(op, ["x"], [op.lower()]) for op in ("Floor", "Ceil", "Round")]
    graph = helper.make_graph(nodes, "rounding", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size])],
                              [helper.make_tensor_value_info(op.lower(), TensorProto.FLOAT, [x.size])
                               for op in ("Floor", "Ceil", "Round")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    out = trnsim.compile_onnx(model.SerializeToString()).run({"x": x})
    np.testing.assert_array_equal(out["floor"], np.floor(x))
    np.testing.assert_array_equal(out["ceil"], np.ceil(x))
    np.testing.assert_array_equal(out["round"], np.round(x))
