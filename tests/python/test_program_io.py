"""Saved programs and .npz inputs: CompiledModel.save / trnsim.load_compiled round trips run
bit-identically (outputs and simulated time); `trnsim compile -o` + `trnsim run FILE.tpg`, and
`trnsim run x.onnx --inputs f.npz` agree with CompiledModel.run on the same inputs; bad files are
exit code 2 with one line of error.

References: onnxruntime for the values (bf16 policy: max error <= 2e-2 of the output's scale,
as in test_compile_onnx.py), and the Python run for the CLI (same program, same inputs: the
report's time is equal, the output statistics equal numpy's on the Python outputs to 1e-12).
"""
import json
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

import trnsim  # noqa: E402
from cli_path import trnsim_cli  # noqa: E402

RNG = np.random.default_rng(7)


def mlp_model():
    """x[4,32] @ W1 + b1 -> Gelu -> @ W2 -> Reshape(shape input) -> Softmax."""
    w1 = RNG.standard_normal((32, 64)).astype(np.float32) * 0.2
    b1 = RNG.standard_normal(64).astype(np.float32) * 0.1
    w2 = RNG.standard_normal((64, 48)).astype(np.float32) * 0.2
    nodes = [h.make_node("MatMul", ["x", "W1"], ["h"]), h.make_node("Add", ["h", "b1"], ["hb"]),
             h.make_node("Gelu", ["hb"], ["g"], domain=""), h.make_node("MatMul", ["g", "W2"], ["o"]),
             h.make_node("Reshape", ["o", "shape"], ["r"]), h.make_node("Softmax", ["r"], ["y"], axis=-1)]
    g = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", T.FLOAT, [4, 32]),
                                    h.make_tensor_value_info("shape", T.INT64, [3])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(w1, "W1"), nh.from_array(b1, "b1"), nh.from_array(w2, "W2")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 20)], ir_version=9)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    d = tmp_path_factory.mktemp("program_io")
    m = mlp_model()
    path = str(d / "mlp.onnx")
    onnx.save(m, path)
    feeds = {"x": RNG.standard_normal((4, 32)).astype(np.float32), "shape": np.array([8, 2, 12], dtype=np.int64)}
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = s.run(None, feeds)[0]
    return d, path, feeds, want


def close_to_reference(got, want):
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 2e-2 * float(np.abs(want).max())


def cli(*args):
    return subprocess.run([trnsim_cli(), *args], capture_output=True, text=True, timeout=120)


def test_save_and_load_round_trip_is_bit_identical(case):
    d, path, feeds, want = case
    cm = trnsim.compile_onnx(path, chip="trn2", dtype="bf16")
    out = cm.run(feeds)
    close_to_reference(out["y"], want)
    assert cm.specialized_inputs == ["shape"]
    f = d / "mlp.tpg"
    cm.save(f)
    lm = trnsim.load_compiled(f)
    assert lm.chip == "trn2" and lm.dtype == "bf16"
    assert lm.input_names == ["x"]
    again = lm.run({"x": feeds["x"]})
    assert np.array_equal(again["y"], out["y"])          # bit for bit
    assert again["y"].dtype == out["y"].dtype
    assert lm.report["time_s"] == cm.report["time_s"]    # the same simulated time
    assert lm.report["instructions"] == cm.report["instructions"]
    # Timing mode of the loaded program: same time, no outputs.
    assert lm.run({}, mode="timing") == {}
    assert lm.report["time_s"] == cm.report["time_s"]
    with pytest.raises(trnsim.ShapeError, match="input shapes it was compiled for"):
        lm.run({"x": np.zeros((2, 32), np.float32)})
    with pytest.raises(trnsim.TrnsimError, match="compiled for chip 'trn2', not 'trn1'"):
        trnsim.load_compiled(f, chip="trn1")


def run_json(*args):
    r = cli("run", *args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def python_run(path, feeds, dtype="bf16"):
    cm = trnsim.compile_onnx(path, chip="trn2", dtype=dtype)
    out = cm.run(feeds)
    return cm.report, out


def assert_cli_matches(j, report, out):
    assert j["time_s"] == report["time_s"]
    for name, v in out.items():
        v64 = v.astype(np.float64)
        assert j["outputs"][name]["shape"] == list(v.shape)
        assert j["outputs"][name]["max_abs"] == float(np.abs(v64).max())
        assert j["outputs"][name]["mean"] == pytest.approx(float(v64.mean()), rel=1e-12, abs=1e-15)


def test_cli_inputs_npz_equals_python_run(case):
    d, path, feeds, want = case
    report, out = python_run(path, feeds)
    plain, packed = str(d / "in.npz"), str(d / "in_compressed.npz")
    np.savez(plain, **feeds)
    np.savez_compressed(packed, **feeds)
    for npz in (plain, packed):
        j = run_json(path, "--chip", "trn2", "--dtype", "bf16", "--inputs", npz)
        assert_cli_matches(j, report, out)
    # Other dtypes of the same values: float64 data, int32 shape.
    other = str(d / "in_other.npz")
    np.savez(other, x=feeds["x"].astype(np.float64), shape=feeds["shape"].astype(np.int32))
    assert_cli_matches(run_json(path, "--dtype", "bf16", "--inputs", other), report, out)


def test_cli_compile_then_run_saved_program(case):
    d, path, feeds, want = case
    report, out = python_run(path, feeds)
    npz = str(d / "in.npz")
    np.savez(npz, **feeds)
    tpg = str(d / "cli.tpg")
    r = cli("compile", path, "--chip", "trn2", "--dtype", "bf16", "--inputs", npz, "-o", tpg, "--json")
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout)
    assert c["specialized_inputs"] == ["shape"]
    assert [p["name"] for p in c["passes"]][0] == "bind-inputs" and all(p["time_s"] >= 0 for p in c["passes"])
    # MatMul(+bias+Gelu on its evacuation), MatMul, Softmax: the Reshape is an alias.
    assert c["kernels"] >= 3 and c["instructions"] > 0 and c["file_bytes"] > 4 * (32 * 64 + 64 * 48)
    r = cli("compile", path, "--chip", "trn2", "--dtype", "bf16", "--inputs", npz, "-o", tpg)
    assert r.returncode == 0 and "segments" in r.stdout and "lowering" in r.stdout, r.stderr
    # Runs without compiling again, on the chip it names; its inputs from the same archive.
    assert_cli_matches(run_json(tpg, "--inputs", npz), report, out)
    assert_cli_matches(run_json(tpg, "--chip", "trn2", "--inputs", npz), report, out)
    r = cli("run", tpg, "--chip", "trn1", "--inputs", npz)
    assert r.returncode == 2 and "compiled for chip 'trn2', not 'trn1'" in r.stderr


def one_line_error(r, *needles):
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("trnsim: error: ")
    for n in needles:
        assert n in lines[0], lines[0]


def test_bad_inputs_are_exit_2_with_one_line(case):
    d, path, feeds, want = case
    junk = d / "junk.npz"
    junk.write_text("not a zip archive\n")
    one_line_error(cli("run", path, "--inputs", str(junk)), str(junk), "cannot read the .npz archive")
    wrong = str(d / "wrong_shape.npz")
    np.savez(wrong, x=np.zeros((4, 31), np.float32), shape=feeds["shape"])
    one_line_error(cli("run", path, "--inputs", wrong), "input 'x'")
    cplx = str(d / "complex.npz")
    np.savez(cplx, x=np.zeros((4, 32), np.complex64), shape=feeds["shape"])
    one_line_error(cli("run", path, "--inputs", cplx), "member 'x.npy'", "unsupported dtype '<c8'")
    fortran = str(d / "fortran.npz")
    np.savez(fortran, x=np.asfortranarray(feeds["x"]), shape=feeds["shape"])
    one_line_error(cli("run", path, "--inputs", fortran), "Fortran-order")
    extra = str(d / "extra.npz")
    np.savez(extra, typo=feeds["x"], x=feeds["x"], shape=feeds["shape"])
    one_line_error(cli("run", path, "--inputs", extra), "array 'typo' is not an input")
    # A file cut short after the magic and this build's format version (read off a real file).
    good = d / "good.tpg"
    npz = str(d / "in.npz")
    np.savez(npz, **feeds)
    assert cli("compile", path, "--inputs", npz, "-o", str(good)).returncode == 0
    bad_tpg = d / "bad.tpg"
    bad_tpg.write_bytes(good.read_bytes()[:12] + b"\xff" * 6)
    one_line_error(cli("run", str(bad_tpg)), str(bad_tpg), "truncated")
    one_line_error(cli("run", str(good), "--check"), "--check with a saved program")
