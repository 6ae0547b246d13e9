"""Small things users hit (issue 11 item 6): --batch on a model whose batch is fixed is a
one-line error naming the input (it used to be ignored silently), and per-op rows show node
names whole (they used to be cut at 40 characters, so PyTorch's long names looked alike)."""
import subprocess

import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402
import numpy as np  # noqa: E402

from cli_path import trnsim_cli  # noqa: E402

LONG = [f"/model/encoder/layer.{i}/attention/self/query/MatMul_projection_of_the_hidden_states" for i in range(2)]


def _model(path, batch):
    w = nh.from_array(np.full((8, 8), 0.5, np.float32), "w")
    nodes = [h.make_node("MatMul", ["x", "w"], ["h"], name=LONG[0]), h.make_node("MatMul", ["h", "w"], ["y"], name=LONG[1])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [batch, 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [batch, 8])], [w])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9), path)
    return str(path)


def _run(*args):
    return subprocess.run([trnsim_cli(), "run", *args], capture_output=True, text=True)


def test_batch_on_a_fixed_batch_model_names_the_input(tmp_path):
    r = _run(_model(tmp_path / "fixed.onnx", 1), "--batch", "4", "--timing-only")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trnsim: error: --batch 4: input 'x'"), r.stderr
    assert _run(_model(tmp_path / "dynamic.onnx", "n"), "--batch", "4", "--timing-only").returncode == 0


def test_per_op_rows_show_whole_node_names(tmp_path):
    r = _run(_model(tmp_path / "m.onnx", 2), "--timing-only")
    assert r.returncode == 0, r.stderr
    for name in LONG:
        assert name in r.stdout
