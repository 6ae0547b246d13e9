"""Round 9 of hardening: configuration-dependent findings (`fuzz/config_diff/`, FINDINGS.md):
models right under a plain compile and wrong or refused once converted, on a chip file the
loader took, or past a width. Each now equals the reference.

Tolerances: converted int8/fp8 weights (per-channel) against onnxruntime, relative L2 error
<= 3% (bf16 gives 0.2%, the int8 fold that was wrong 10.7%); MX and 4:16 conversions against
trnsim's own fp32 compile of the batch-2 sibling, the same model that always converted:
equal within 1e-5 relative after conversion (the batch-1 model refused before); exact
arithmetic (MaxPool) bit-equal to onnxruntime."""
import tempfile
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import trnsim  # noqa: E402
from cli_path import trnsim_cli  # noqa: E402

FINDINGS = Path(__file__).resolve().parents[2] / "fuzz" / "config_diff" / "findings"


def inputs(path):
    m = onnx.load(str(path))
    rng = np.random.default_rng(0)
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in m.graph.input}


def reference(path, x):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, x)))


def converted(path, x, **kw):
    with tempfile.TemporaryDirectory() as td:
        t = Path(td) / "p.tpg"
        report = trnsim.convert(str(path), str(t), **kw)
        return report, trnsim.load_compiled(str(t)).run(x)


@pytest.mark.parametrize("quantize", ["int8", "fp8"])
def test_layernorm_prologue_is_not_folded_into_quantised_codes(quantize):
    """LayerNorm(x, scale in [0.5, 1.5]) @ W, weights converted: the scale was folded into the
    int8/fp8 codes and rounded back to the code type (fp8: 24 of 32 outputs NaN, past e4m3's
    448; int8: 10.7% error). Now the fold takes fp32 weights only."""
    p = FINDINGS / "quantized-ln-prologue.onnx"
    x = inputs(p)
    want = reference(p, x)["y"]
    report, got = converted(p, x, quantize=quantize, chip="trn2")
    y = got["y"]
    assert np.isfinite(y).all()
    assert np.linalg.norm(y - want) / np.linalg.norm(want) <= 0.03
    assert report["accuracy"]["y"]["non_finite_mismatches"] == 0 and report["accuracy"]["y"]["cosine"] > 0.99


@pytest.mark.parametrize("kw", [dict(quantize="mxfp8", chip="trn3"), dict(quantize="mxfp8", activations="mxfp8", chip="trn3"),
                                dict(sparsity="4:16", dtype="bf16", chip="trn2")], ids=["mxfp8", "mxfp8-act", "sparse"])
def test_a_batch_one_residual_operand_flattens(kw):
    """y = a[1,4,32] @ W + x[1,4,32] under MX and 4:16 conversions: refused ("does not
    flatten": broadcast_view's stride 0 on the size-1 axis), where batch 2 converted. Now the
    batch-1 rows equal the batch-2 sibling's first batch index run on the same inputs."""
    p = FINDINGS / "flat-operand-batch1.onnx"
    x = inputs(p)
    _, got = converted(p, x, **kw)
    m2 = onnx.load(str(p))
    for v in list(m2.graph.input) + list(m2.graph.output):
        v.type.tensor_type.shape.dim[0].dim_value = 2
    with tempfile.TemporaryDirectory() as td:
        p2 = Path(td) / "batch2.onnx"
        onnx.save(m2, str(p2))
        x2 = {k: np.concatenate([v, v]) for k, v in x.items()}
        _, got2 = converted(p2, x2, **kw)
    np.testing.assert_allclose(got["y"][0], got2["y"][0], rtol=1e-5, atol=1e-6)


def test_max_pool_over_a_wide_row_splits_its_reduce():
    """MaxPool 5 x 5 over [1, 1, 5, 600]: one reduce took 75,000 elements per partition, past
    the engines' 65,536 (refused by the ISA check). Now split by columns; equal to onnxruntime."""
    p = FINDINGS / "pool-window-wide-row.onnx"
    x = inputs(p)
    got = trnsim.compile_onnx(str(p), chip="trn2").run(x)
    np.testing.assert_array_equal(got["y"], reference(p, x)["y"])


def test_a_chip_file_with_another_moving_width_is_refused_in_one_line():
    """max_moving_free 256 was accepted, and the compiler (which tiles in 512) emitted
    matmuls its own validator refused on that chip."""
    import subprocess
    p = subprocess.run([trnsim_cli(), "run", str(FINDINGS / "moving-free-256.onnx"), "--chip",
                        str(FINDINGS / "trn2-moving-free-256.yaml"), "--cores", "1"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "core.tensor.max_moving_free: expected 512" in p.stderr
