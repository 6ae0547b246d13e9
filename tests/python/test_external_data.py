"""ONNX external data (the default of torch.onnx.export's dynamo exporter): tensors stored
beside the model are memory-mapped from the model's folder, and a location that leaves the
folder ('../../etc/passwd', an absolute path) is refused with a one-line error."""
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402
from onnx.external_data_helper import set_external_data  # noqa: E402

import trnsim  # noqa: E402
from cli_path import trnsim_cli  # noqa: E402

RNG = np.random.default_rng(5)


def _model(w):
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 8])], [nh.from_array(w, "w")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=9)


def test_external_weights_load_from_beside_the_model(tmp_path):
    w = RNG.standard_normal((16, 8)).astype(np.float32)
    path = tmp_path / "m.onnx"
    onnx.save(_model(w), path, save_as_external_data=True, all_tensors_to_one_file=True, location="m.data", size_threshold=0)
    assert (tmp_path / "m.data").stat().st_size == w.nbytes
    x = RNG.standard_normal((2, 16)).astype(np.float32)
    got = trnsim.compile_onnx(str(path)).run({"x": x})["y"]
    np.testing.assert_allclose(got, x @ w, rtol=1e-5, atol=1e-5)
    r = subprocess.run([trnsim_cli(), "run", str(path), "--timing-only"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("location", ["../../etc/passwd", "/etc/passwd"])
def test_locations_outside_the_models_folder_are_refused(tmp_path, location):
    m = _model(np.zeros((16, 8), np.float32))
    t = m.graph.initializer[0]
    set_external_data(t, location=location, offset=0, length=512)
    t.ClearField("raw_data")
    t.data_location = T.EXTERNAL
    path = tmp_path / "evil.onnx"
    path.write_bytes(m.SerializeToString())
    r = subprocess.run([trnsim_cli(), "run", str(path), "--timing-only"], capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "outside the model's folder" in lines[0] and "refused" in lines[0], r.stderr
