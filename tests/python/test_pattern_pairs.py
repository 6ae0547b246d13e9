"""Round 9 of hardening: the compiler's rewrite passes on patterns composed, doubled or at the
edge of their conditions (`fuzz/pattern_pairs/`, FINDINGS.md). Each model here gave a silent
wrong answer (NaN from SBUF a node never wrote, a dropped Clip bound, a GELU look-alike) or an
internal refusal; now each equals the reference on the configurations that showed it: trn2
with all cores (differential.py's) and trn1 on one core (where SBUF residency plans).

Reference: onnxruntime 1.x with graph optimisations off, on fuzz/differential.py's seeded
inputs; the two Clip models against onnx.reference (onnxruntime applies the type's max as the
default bound, so a min of +inf gives FLT_MAX there and inf in onnx.reference and PyTorch).
Tolerance: NaN and inf at the same places, finite values within 1e-3 x max |reference|."""
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import trnsim  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FINDINGS = sorted((ROOT / "fuzz" / "pattern_pairs" / "findings").glob("*.onnx"))
sys.path.insert(0, str(ROOT / "fuzz"))
from differential import random_inputs  # noqa: E402


def reference(path: Path, m, inputs: dict) -> dict:
    if path.name.startswith("clip-"):
        from onnx.reference import ReferenceEvaluator
        return dict(zip([o.name for o in m.graph.output], ReferenceEvaluator(m).run(None, inputs)))
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # its own GELU fusion is not the reference
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    with np.errstate(all="ignore"):
        return dict(zip([o.name for o in s.get_outputs()], s.run(None, inputs)))


def test_the_findings_are_there():
    assert len(FINDINGS) >= 12, FINDINGS


@pytest.mark.parametrize("chip,cores", [("trn2", 0), ("trn1", 1)])
@pytest.mark.parametrize("path", FINDINGS, ids=lambda p: p.stem)
def test_finding_matches_the_reference(path, chip, cores):
    m = onnx.load(str(path))
    inputs = random_inputs(m)
    want = reference(path, m, inputs)
    got = trnsim.compile_onnx(path.read_bytes(), chip=chip, dtype="fp32", cores=cores).run(inputs)
    for name, e in want.items():
        g = np.asarray(got[name], np.float64)
        e = np.asarray(e, np.float64)
        assert g.shape == e.shape, name
        assert np.array_equal(np.isnan(g), np.isnan(e)), f"{name}: NaN at other places"
        fin = np.isfinite(e)
        assert np.array_equal(g[~fin], e[~fin], equal_nan=True), f"{name}: inf differ"
        if fin.any():
            np.testing.assert_allclose(g[fin], e[fin], rtol=0, atol=1e-3 * max(np.abs(e[fin]).max(), 1e-3))
