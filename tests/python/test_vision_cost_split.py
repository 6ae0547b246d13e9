"""bench/vision_cost_split.py (issue 10, vision round 4): the per-layer-type split of a CNN's
per-op report and the one-constant chip variants it measures with.

References: the ONNX graph's own kernel_shape attributes (layer types), the report's headline
time_s (the per-op shares are a partition of it: their sum must equal it to 1e-9 relative), and
the inf2 preset's YAML text (a variant differs from it in exactly the changed field and the name).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx is not installed (pip install -r requirements.txt)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import simulate_row  # noqa: E402
import vision_cost_split as split  # noqa: E402

pytestmark = pytest.mark.skipif(not Path(simulate_row.trnsim_cmd()).exists(), reason="the trnsim CLI is not built")


def tiny_cnn(path: Path) -> None:
    """Stem 7x7/2 + max-pool, a 3x3 conv with a residual Add, a 1x1 conv, global pool, Gemm."""
    rng = np.random.default_rng(0)
    w = lambda *s: numpy_helper.from_array(rng.standard_normal(s).astype(np.float32) * 0.1, f"w{len(inits)}")  # noqa: E731
    inits: list = []
    for shape in [(16, 3, 7, 7), (16, 16, 3, 3), (32, 16, 1, 1), (10, 32)]:
        inits.append(w(*shape))
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["s"], name="/stem/Conv", kernel_shape=[7, 7], strides=[2, 2], pads=[3, 3, 3, 3]),
        helper.make_node("Relu", ["s"], ["sr"], name="/stem/Relu"),
        helper.make_node("MaxPool", ["sr"], ["p"], name="/pool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p", "w1"], ["c"], name="/b/c3/Conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "p"], ["a"], name="/b/Add"),
        helper.make_node("Conv", ["a", "w2"], ["d"], name="/b/c1/Conv", kernel_shape=[1, 1]),
        helper.make_node("GlobalAveragePool", ["d"], ["g"], name="/gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="/flat"),
        helper.make_node("Gemm", ["f", "w3"], ["y"], name="/fc/Gemm", transB=1),
    ]
    graph = helper.make_graph(nodes, "tiny_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_layer_types_follow_the_kernel_shapes(tmp_path):
    f = tmp_path / "tiny.onnx"
    tiny_cnn(f)
    assert split.layer_types(f) == {"/stem/Conv": "stem", "/b/c3/Conv": "3x3", "/b/c1/Conv": "1x1"}


def test_split_is_a_partition_of_the_run_time(tmp_path):
    f = tmp_path / "tiny.onnx"
    tiny_cnn(f)
    report = simulate_row.simulate(f, "inf2", 1)
    s = split.split(report, split.layer_types(f))
    assert set(s) == set(split.TYPES)
    assert sum(s.values()) == pytest.approx(report["time_s"] * 1e6, rel=1e-9)
    assert s["stem"] > 0 and s["3x3"] > 0 and s["1x1"] > 0 and s["rest"] > 0
    # The stem bucket is the first conv (with its Pad) and the pool before the body.
    stem_ops = [o for o in report["ops"] if o["name"].removesuffix(".pad") in ("/stem/Conv", "/pool/MaxPool")]
    assert s["stem"] == pytest.approx(sum(o["time_s"] for o in stem_ops) * 1e6, rel=1e-9)


@pytest.mark.parametrize("field,value", [("bandwidth_per_engine", "34 GB/s"), ("fixed_overhead", "130 ns")])
def test_variant_changes_one_field(tmp_path, field, value):
    chip = Path(split.variant_chip(field, value, tmp_path, 1))
    old = split.PRESET.read_text().splitlines()
    new = chip.read_text().splitlines()
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert len(old) == len(new) and len(changed) == 2
    assert changed[0] == ("name: inf2", "name: inf2-variant1")
    assert changed[1][1].strip().startswith(f"{field}: {value}")
    # The CLI loads it, and the changed DMA constant makes the same program faster.
    f = tmp_path / "tiny.onnx"
    tiny_cnn(f)
    assert simulate_row.simulate(f, str(chip), 1)["time_s"] < simulate_row.simulate(f, "inf2", 1)["time_s"]
