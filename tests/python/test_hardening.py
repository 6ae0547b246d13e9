"""Hardening (issue 17, docs/hardening.md): bad input through the commands and the Python API
ends in a one-line typed error with exit status 2 (never a traceback, a crash, a parser code
of 100+, or output lost to an encoding error), and the fixes that make results right: each
case is checked against what the input must give (a closed form or the reference check)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import trnsim
from cli_path import trnsim_cli

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict | None = None, timeout: int = 60) -> subprocess.CompletedProcess:
    e = dict(os.environ, **(env or {}))
    return subprocess.run([trnsim_cli(), *args], capture_output=True, timeout=timeout, env=e)


def one_line_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode == 2, (p.returncode, err)
    assert err.startswith("trnsim: error: ") and err.count("\n") == 1, err
    for n in needles:
        assert n in err, (n, err)
    return err


@pytest.mark.parametrize("args", [["kernel", "matmul", "--no-such-flag"], ["collective", "--ranks", "many"],
                                  ["specs", "--json", "extra", "positional"], ["nosuchcommand"], []])
def test_argument_errors_exit_2_on_one_line(args):
    one_line_error(cli(*args))


def chip_yaml(tmp_path: Path, old: bytes, new: bytes) -> Path:
    text = (ROOT / "configs" / "chips" / "trn2.yaml").read_bytes()
    assert old in text
    p = tmp_path / "chip.yaml"
    p.write_bytes(text.replace(old, new, 1))
    return p


def test_non_utf8_name_is_written_as_replacement_characters(tmp_path):
    p = cli("specs", "--chip", str(chip_yaml(tmp_path, b"name: trn2", b"name: trn\xff\xfe")), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["chips"][0]["name"] == "trn\ufffd\ufffd"


@pytest.mark.parametrize("old,new,field", [(b"clock: 2.4 GHz", b"clock: 1 Hz", "clock"),
                                           (b"clock: 0.96 GHz", b"clock: 0.001 Hz", "clock")])
def test_clock_outside_the_simulators_range_names_the_field(tmp_path, old, new, field):
    err = one_line_error(cli("kernel", "matmul", "--chip", str(chip_yaml(tmp_path, old, new))),
                         field, "1 MHz to 1000 GHz")
    assert "scheduled in the past" not in err


def test_device_file_as_config_is_refused_after_a_bounded_read():
    one_line_error(cli("specs", "--chip", "/dev/zero"), "/dev/zero", "larger than")


def test_collective_larger_than_a_chips_hbm_is_refused():
    one_line_error(cli("collective", "--op", "all-reduce", "--ranks", "16", "--system", "trn1.32xlarge",
                       "--sizes", "536870912G"), "larger than one chip's HBM")


def test_named_algorithm_on_too_many_ranks_is_refused_up_front():
    p = cli("collective", "--op", "all-reduce", "--systems", "800", "--ranks", "102400", "--system", "trn2.48xlarge",
            "--sizes", "1G", "--algorithm", "ring", timeout=120)
    one_line_error(p, "transfers", "more than trnsim times")


def test_huge_kernel_is_refused_up_front_with_its_estimate():
    # 65,536^3 took 8.4 GiB before bad_alloc: now refused before any instruction is built,
    # with the estimate (33.5 M matmul tiles = 512 x 128 x 512) and the limit.
    p = cli("kernel", "matmul", "--m", "65536", "--k", "65536", "--n", "65536", env={"TRNSIM_MAX_MEMORY": "16G"})
    one_line_error(p, "needs about 33554432 instructions", "limit of 16.0 GiB", "TRNSIM_MAX_MEMORY")


def test_layernorm_chunk_not_a_multiple_of_512_matches_the_reference():
    p = cli("kernel", "layernorm", "--rows", "4", "--cols", "1000", "--chunk", "100", "--functional", "--json")
    assert p.returncode == 0, p.stderr
    checks = json.loads(p.stdout)["check"]
    assert checks and all(c["violations"] == 0 for c in checks.values()), checks


def relu_model(opset: int) -> bytes:
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    return m.SerializeToString()


def test_check_on_a_model_onnxruntime_rejects_is_one_line(tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes(relu_model((1 << 40) + 17))
    p = subprocess.run([sys.executable, "-m", "trnsim", "run", str(model), "--check"], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr


@pytest.mark.parametrize("name", ["no-outputs.onnx", "neg-init-dim.onnx"])
def test_python_errors_are_trnsim_errors(name):
    # Models whose C++ errors were std::out_of_range / std::length_error (raw IndexError and
    # ValueError in Python): whatever the compiler throws, Python sees a TrnsimError.
    with pytest.raises(trnsim.TrnsimError):
        trnsim.compile_onnx((ROOT / "fuzz" / "regressions" / "onnx" / name).read_bytes())
    with pytest.raises(trnsim.TrnsimError):
        trnsim.compile_onnx(b"\x08\x07garbage that is not a model")


def test_output_to_a_full_device_is_an_error(tmp_path):
    with open("/dev/full", "wb") as full:
        p = subprocess.run([trnsim_cli(), "specs", "--json"], stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert p.returncode == 2, p.stderr
    assert b"writing the output failed" in p.stderr
    p = cli("kernel", "matmul", "--m", "128", "--k", "128", "--n", "128", "--trace", "/dev/full")
    assert p.returncode == 2  # (progress lines come first on stderr; the error is the last)
    assert p.stderr.decode().splitlines()[-1].startswith("trnsim: error: writing the trace file '/dev/full' failed")


def test_system_naming_a_non_spec_file_as_chip_does_not_echo_it(tmp_path):
    (tmp_path / "secret.yaml").write_text("TOP-SECRET-TOKEN-1234\n")
    text = (ROOT / "configs" / "systems" / "trn1.32xlarge.yaml").read_text()
    (tmp_path / "sys.yaml").write_text(text.replace("chip: trn1", "chip: secret.yaml", 1))
    err = one_line_error(cli("specs", "--system", str(tmp_path / "sys.yaml")), "not a spec")
    assert "TOP-SECRET" not in err


@pytest.mark.parametrize("opt", [["--dtype", "bf16"], ["--batch", "4"], ["--cores", "2"], ["--dim", "n=3"]])
def test_compile_options_are_refused_for_a_saved_program(tmp_path, opt):
    model, tpg = tmp_path / "m.onnx", tmp_path / "m.tpg"
    model.write_bytes(relu_model(17))
    p = cli("compile", str(model), "-o", str(tpg))
    assert p.returncode == 0, p.stderr
    assert cli("run", str(tpg)).returncode == 0
    one_line_error(cli("run", str(tpg), *opt), str(tpg), opt[0], "does not apply to a saved program")


def unary_model(op: str) -> bytes:
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("op,ref", [("Relu", lambda x: np.maximum(x, 0)), ("Sign", np.sign)])
def test_nan_propagates_through_relu_and_sign(op, ref):
    # numpy (like onnxruntime, onnx.reference and PyTorch) keeps NaN; the simulator made it 0.
    x = np.array([[np.nan, -1.0, 0.0], [2.0, np.nan, -np.inf]], np.float32)
    y = trnsim.compile_onnx(unary_model(op)).run({"x": x})["y"]
    np.testing.assert_array_equal(np.asarray(y).reshape(2, 3), ref(x))


def graph_model(nodes, inputs, outputs, inits=(), opset=17) -> bytes:
    from onnx import helper
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8  # what onnxruntime (the reference of some tests) reads
    return m.SerializeToString()


def vi(name, shape, elem=None):
    from onnx import TensorProto, helper
    return helper.make_tensor_value_info(name, elem or TensorProto.FLOAT, shape)


def int_init(name, values, dims=None):
    from onnx import TensorProto, helper
    return helper.make_tensor(name, TensorProto.INT64, [len(values)] if dims is None else dims, values)


def bad_models():
    """Models each of which the issue found crashing, hanging or accepted; name -> (bytes, needle)."""
    from onnx import TensorProto, helper
    n = helper.make_node
    s = vi("s", [])  # a rank-0 input
    y = vi("y", None)
    return {
        "squeeze-rank0": (graph_model([n("Squeeze", ["s", "ax"], ["y"])], [s], [y], [int_init("ax", [0])]), "rank-0"),
        "slice-rank0": (graph_model([n("Slice", ["s", "st", "en"], ["y"])], [s], [y],
                                    [int_init("st", [0]), int_init("en", [1])]), "rank-0"),
        "split-rank0": (graph_model([n("Split", ["s"], ["y", "z"])], [s], [y, vi("z", None)]), "rank-0"),
        "pad-rank0": (graph_model([n("Pad", ["s", "p", "", "ax"], ["y"])], [s], [y],
                                  [int_init("p", [1, 1]), int_init("ax", [0])]), "rank-0"),
        "concat-rank0": (graph_model([n("Concat", ["s", "s"], ["y"], axis=0)], [s], [y]), "rank-0"),
        "gather-elements-rank0": (graph_model([n("GatherElements", ["s", "i"], ["y"])], [s, vi("i", [], TensorProto.INT64)], [y]),
                                  "rank-0"),
        "split-negative": (graph_model([n("Split", ["x", "sp"], ["y", "z"])], [vi("x", [4])], [y, vi("z", None)],
                                       [int_init("sp", [6, -2])]), "negative"),
        "reshape-negative": (graph_model([n("Reshape", ["x", "sh"], ["y"])], [vi("x", [4])], [y], [int_init("sh", [-2, -2])]),
                             "negative"),
        "constant-of-shape-2^64": (graph_model([n("ConstantOfShape", ["sh"], ["y"])], [], [y],
                                               [int_init("sh", [1 << 32, 1 << 32])]), "too large"),
        "range-zero-delta": (graph_model([n("Range", ["a", "b", "d"], ["y"])], [], [y],
                                         [int_init("a", [0], []), int_init("b", [10], []), int_init("d", [0], [])]), "delta"),
        "opset-2^40+17": (relu_model((1 << 40) + 17), "opset"),
        "output-redefines-initializer": (graph_model([n("Relu", ["x"], ["w"]), n("Add", ["x", "w"], ["y"])], [vi("x", [2])], [y],
                                                     [helper.make_tensor("w", TensorProto.FLOAT, [2], [1, 2])]), "already defines"),
        "duplicate-inputs": (graph_model([n("Relu", ["x"], ["y"])], [vi("x", [2]), vi("x", [2])], [y]), "twice"),
        # 65537 wide: two windows to unroll (one window over the whole input is a global mean)
        "average-pool-65536": (graph_model([n("AveragePool", ["x"], ["y"], kernel_shape=[1, 65536])], [vi("x", [1, 1, 1, 65537])],
                                           [y]), "window"),
        "int64-constant-2^24+1": (graph_model([n("Add", ["x", "c"], ["y"])], [vi("x", [1], TensorProto.INT64)],
                                              [vi("y", [1], TensorProto.INT64)], [int_init("c", [(1 << 24) + 1])]), "2^24"),
    }


@pytest.mark.parametrize("name", sorted(bad_models()))
def test_bad_models_are_one_typed_error(name):
    data, needle = bad_models()[name]
    import onnx
    m = onnx.load_from_string(data)
    feeds = {i.name: np.zeros([d.dim_value for d in i.type.tensor_type.shape.dim],
                              np.int64 if i.type.tensor_type.elem_type == onnx.TensorProto.INT64 else np.float32)
             for i in m.graph.input}
    with pytest.raises(trnsim.TrnsimError, match=needle.replace("^", r"\^")):
        trnsim.compile_onnx(data).run(feeds)  # some compile at their first run: run to the error


# ---- round 2: NaN through Max/Min/Clip/HardSigmoid, one element type, --dim names, sweep files ----

def ort_and_sim(m, feeds):
    import onnxruntime as ort
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = np.asarray(list(trnsim.compile_onnx(m.SerializeToString()).run(feeds).values())[0]).reshape(ref.shape)
    return ref, got


NAN_X = np.array([[np.nan, -1.0, 0.5], [2.0, np.nan, -np.inf]], np.float32)
NAN_B = np.array([[1.0, np.nan, 0.0], [np.nan, 3.0, 1.0]], np.float32)


@pytest.mark.parametrize("op", ["Max", "Min", "Clip", "HardSigmoid", "ClipRuntime"])
def test_nan_propagates_like_onnxruntime(op):
    # IEEE 754-2019 maximum/minimum (onnxruntime, numpy, PyTorch): a NaN operand gives NaN. The
    # ALU's fmax/fmin returned the other operand. Exact match (NaN positions; values to 1e-6).
    from onnx import TensorProto, helper
    n, feeds, inits, ins = op, {"x": NAN_X}, [], [vi("x", [2, 3])]
    if op in ("Max", "Min"):
        node, feeds["b"], ins = helper.make_node(op, ["x", "b"], ["y"]), NAN_B, ins + [vi("b", [2, 3])]
    elif op == "Clip":
        node = helper.make_node(op, ["x", "lo", "hi"], ["y"])
        inits = [helper.make_tensor("lo", TensorProto.FLOAT, [], [-0.5]), helper.make_tensor("hi", TensorProto.FLOAT, [], [1.0])]
    elif op == "ClipRuntime":  # bounds computed at run time: element-wise Max and Min on the device
        node, ins = helper.make_node("Clip", ["x", "lo", "hi"], ["y"]), ins + [vi("lo", []), vi("hi", [])]
        feeds.update(lo=np.array(-0.5, np.float32), hi=np.array(1.0, np.float32))
    else:
        node = helper.make_node(op, ["x"], ["y"])
    import onnx
    m = onnx.load_from_string(graph_model([node], ins, [vi("y", [2, 3])], inits))
    ref, got = ort_and_sim(m, feeds)
    assert np.isnan(ref).any(), "the case must exercise NaN"
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(ref), atol=1e-6)


@pytest.mark.parametrize("op", ["Max", "Min"])
def test_nan_propagates_in_host_folding(op):
    # Every input a constant: the compiler folds the node on the host (same IEEE rule).
    from onnx import numpy_helper
    import onnx
    from onnx import helper
    m = onnx.load_from_string(graph_model([helper.make_node(op, ["x", "b"], ["y"])], [], [vi("y", [2, 3])],
                                          [numpy_helper.from_array(NAN_X, "x"), numpy_helper.from_array(NAN_B, "b")]))
    import onnxruntime as ort
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {})[0]
    got = np.asarray(list(trnsim.compile_onnx(m.SerializeToString()).run({}).values())[0]).reshape(ref.shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(ref), atol=1e-6)


@pytest.mark.parametrize("op,out", [("Add", None), ("Mul", None), ("Max", None), ("Equal", "bool")])
def test_mixed_element_types_are_refused(op, out):
    # ONNX's type constraint T: Add(float, int64) is not a valid model (onnxruntime refuses it).
    from onnx import TensorProto, helper
    data = graph_model([helper.make_node(op, ["x", "c"], ["y"])], [vi("x", [3])],
                       [vi("y", [3], TensorProto.BOOL if out else None)], [int_init("c", [1, 2, 3])])
    with pytest.raises(trnsim.TrnsimError, match="is i64 but input 0 .x. is f32"):
        trnsim.compile_onnx(data).run({"x": np.zeros(3, np.float32)})


def test_constant_ints_attribute_added_to_float_is_refused_by_the_cli():
    one_line_error(cli("run", str(ROOT / "fuzz" / "regressions" / "onnx" / "constant-ints-attr.onnx")), "element type")


def test_pow_takes_an_exponent_of_another_type():
    # Pow(T, T1) is the exception: an int64 exponent of a float base is valid (closed form x^2).
    from onnx import TensorProto, helper
    data = graph_model([helper.make_node("Pow", ["x", "c"], ["y"])], [vi("x", [3])], [vi("y", [3])],
                       [helper.make_tensor("c", TensorProto.INT64, [], [2])])
    y = trnsim.compile_onnx(data).run({"x": np.array([1, 2, 3], np.float32)})["y"]
    np.testing.assert_allclose(np.asarray(y).reshape(3), [1, 4, 9], rtol=1e-6)


def dynamic_relu(tmp_path: Path) -> Path:
    from onnx import helper
    p = tmp_path / "dyn.onnx"
    p.write_bytes(graph_model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["batch", "seq"])], [vi("y", ["batch", "seq"])]))
    return p


def test_unknown_dim_name_is_refused_naming_the_models_axes(tmp_path):
    model = dynamic_relu(tmp_path)
    one_line_error(cli("run", str(model), "--dim", "sqe=4"), "sqe", "seq", "x[1]")
    p = cli("run", str(model), "--dim", "seq=4", "--json")
    assert p.returncode == 0, p.stderr
    assert cli("run", str(model), "--dim", "x[1]=4").returncode == 0
    with pytest.raises(trnsim.TrnsimError, match="sqe"):
        trnsim.compile_onnx(str(model), dims={"sqe": 4})
    c = trnsim.compile_onnx(str(model), dims={"seq": 4})  # a run with other shapes keeps working
    y = c.run({"x": -np.ones((2, 5), np.float32)})["y"]
    np.testing.assert_array_equal(np.asarray(y).reshape(2, 5), np.zeros((2, 5)))


def test_serve_trace_with_a_nan_timestamp_is_refused(tmp_path):
    t = tmp_path / "t.csv"
    t.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n0,10,10\nnan,10,10\n")
    one_line_error(cli("serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "8", "--trace", str(t)),
                   "row 3", "TIMESTAMP")


def test_serve_int_option_past_int32_is_refused():
    # 2^32 + 8 ranks became 8 (static_cast<int>): now "too large".
    one_line_error(cli("serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "4294967304",
                       "--requests", "2"), "--tp", "too large")


def sweep_regressions():
    return sorted((ROOT / "fuzz" / "regressions" / "sweep").iterdir())


@pytest.mark.parametrize("path", sweep_regressions(), ids=lambda p: p.name)
def test_sweep_file_regressions_end_in_a_sweep_spec_error(path):
    # Each input once crashed (TypeError, ValueError, UnicodeDecodeError), hung (a 10^7-point
    # grid, 10^12 samples, an alias bomb) or passed an infinite range; replayed like the C++ corpus.
    from trnsim.sweeps import SweepSpecError, parse_spec
    with pytest.raises(SweepSpecError):
        parse_spec(path)


def test_nan_propagates_through_reduce_max_like_onnx_reference():
    # onnx.reference, numpy and PyTorch give NaN for a row holding a NaN (onnxruntime's answer
    # depends on where the NaN stands: [2, nan, -inf] gives 2), so the reference here is onnx's.
    import onnx
    from onnx import helper
    from onnx.reference import ReferenceEvaluator
    m = onnx.load_from_string(graph_model([helper.make_node("ReduceMax", ["x"], ["y"], keepdims=0, axes=[1])],
                                          [vi("x", [2, 3])], [vi("y", [2])]))
    ref = ReferenceEvaluator(m).run(None, {"x": NAN_X})[0]
    got = np.asarray(trnsim.compile_onnx(m.SerializeToString()).run({"x": NAN_X})["y"]).reshape(ref.shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))


@pytest.mark.parametrize("traffic,needles", [
    (["--rate", "1e-300", "--requests", "3"], ["request 1 would arrive", "30 days"]),  # hung: the clock wrapped
    (["--rate", "1", "--requests", "1000000000000000"], ["--requests", "TRNSIM_MAX_MEMORY"]),  # was bad_alloc, exit 3
    (["--rate", "1", "--duration", "1e300"], ["--duration", "30 days"]),
])
def test_serve_traffic_past_the_clock_or_memory_is_refused_up_front(traffic, needles):
    p = cli("serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "8", *traffic,
            env={"TRNSIM_MAX_MEMORY": "2G"}, timeout=60)
    one_line_error(p, *needles)


# ---- round 3: axes of rank-0 (scalar) tensors, as ONNX defines them ----

def scalar_cases():
    """Axis-taking ops on a rank-0 input s: name -> (model bytes, feeds, reference). reference is
    None where ONNX's range [-r, r-1] is empty (onnxruntime refuses the model too), else
    "ort" or "ref" (onnx.reference, where onnxruntime refuses a model ONNX's shape rules allow)."""
    from onnx import TensorProto, helper, numpy_helper
    n, s, y, f = helper.make_node, vi("s", []), vi("y", None), {"s": np.array(0.7, np.float32)}
    i64, a0 = vi("y", None, TensorProto.INT64), [int_init("a", [0])]
    fval = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
    return {
        # refused: these crashed (ArgMax, ArgMin, CumSum, ScatterElements, Resize: segfaults) or
        # were accepted though ONNX has no axis 0 of a scalar (Softmax axis 0, Reduce axes [0])
        "ArgMax": (graph_model([n("ArgMax", ["s"], ["y"])], [s], [i64]), f, None),
        "ArgMin": (graph_model([n("ArgMin", ["s"], ["y"], axis=-1)], [s], [i64]), f, None),
        "CumSum": (graph_model([n("CumSum", ["s", "a"], ["y"])], [s], [y], [int_init("a", [0], [])]), f, None),
        "ScatterElements": (graph_model([n("ScatterElements", ["s", "i", "u"], ["y"])], [s, vi("u", [])], [y],
                                        [int_init("i", [0], [])]), {**f, "u": np.array(2, np.float32)}, None),
        "Resize-axes0": (graph_model([n("Resize", ["s", "", "sc"], ["y"], axes=[0])], [s], [y], [fval("sc", [2.0])], opset=18),
                         f, None),
        "Softmax-axis0": (graph_model([n("Softmax", ["s"], ["y"], axis=0)], [s], [y]), f, None),
        "ReduceSum-axes0": (graph_model([n("ReduceSum", ["s", "a"], ["y"])], [s], [y], a0), f, None),
        "ReduceMean-axes0": (graph_model([n("ReduceMean", ["s", "a"], ["y"])], [s], [y], a0, opset=18), f, None),
        "TopK": (graph_model([n("TopK", ["s", "k"], ["y", "j"])], [s], [y, vi("j", None, TensorProto.INT64)],
                             [int_init("k", [1])]), f, None),
        "LayerNormalization": (graph_model([n("LayerNormalization", ["s", "g"], ["y"])], [s], [y], [fval("g", 1.0)]), f, None),
        "OneHot": (graph_model([n("OneHot", ["i", "d", "v"], ["y"])], [vi("i", [], TensorProto.INT64)], [y],
                               [int_init("d", [4], []), fval("v", [0, 1])]), {"i": np.array(2, np.int64)}, None),
        # allowed: ONNX defines these on a scalar
        "ReduceSum-no-axes": (graph_model([n("ReduceSum", ["s"], ["y"])], [s], [y]), f, "ort"),
        "ReduceMax-no-axes": (graph_model([n("ReduceMax", ["s"], ["y"], keepdims=0)], [s], [y], opset=18), f, "ort"),
        "Flatten-axis0": (graph_model([n("Flatten", ["s"], ["y"], axis=0)], [s], [y]), f, "ort"),
        "Unsqueeze-0": (graph_model([n("Unsqueeze", ["s", "a"], ["y"])], [s], [y], a0), f, "ort"),
        "Unsqueeze-minus1": (graph_model([n("Unsqueeze", ["s", "a"], ["y"])], [s], [y], [int_init("a", [-1])]), f, "ort"),
        "Squeeze-no-axes": (graph_model([n("Squeeze", ["s"], ["y"])], [s], [y]), f, "ort"),
        "Transpose": (graph_model([n("Transpose", ["s"], ["y"])], [s], [y]), f, "ort"),
        "Expand": (graph_model([n("Expand", ["s", "r"], ["y"])], [s], [y], [int_init("r", [3])]), f, "ort"),
        "Gather-scalar-index": (graph_model([n("Gather", ["x", "i"], ["y"], axis=0)], [vi("x", [3])], [y],
                                            [int_init("i", [1], [])]), {"x": np.array([1, 2, 3], np.float32)}, "ort"),
        "Slice-no-axes": (graph_model([n("Slice", ["s", "st", "en"], ["y"])], [s], [y],
                                      [int_init("st", []), int_init("en", [])]), f, "ref"),
    }


@pytest.mark.parametrize("name", sorted(scalar_cases()))
def test_axis_of_a_scalar_follows_onnx(name):
    import onnx
    import onnxruntime as ort
    data, feeds, reference = scalar_cases()[name]
    if reference is None:
        # onnxruntime refuses it too (the independent check that ONNX has no such axis)
        with pytest.raises(Exception):
            ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
        with pytest.raises(trnsim.ShapeError) as e:
            trnsim.compile_onnx(data).run(feeds)
        msg = str(e.value)
        assert "\n" not in msg and "node '" in msg and ("rank-0" in msg or "rank >= 1" in msg), msg
        return
    if reference == "ort":
        ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    else:
        from onnx.reference import ReferenceEvaluator
        ref = ReferenceEvaluator(onnx.load_from_string(data)).run(None, feeds)[0]
    got = np.asarray(list(trnsim.compile_onnx(data).run(feeds).values())[0])
    assert got.size == ref.size
    np.testing.assert_allclose(got.reshape(ref.shape), ref, rtol=1e-6)


@pytest.mark.parametrize("name", ["argmax-rank0", "cumsum-rank0", "scatter-elements-rank0", "resize-axes-rank0"])
def test_scalar_axis_regressions_are_one_line_through_the_cli(name):
    # Each segfaulted (an axis 0 of a rank-0 shape indexed an empty vector).
    one_line_error(cli("run", str(ROOT / "fuzz" / "regressions" / "onnx" / f"{name}.onnx")), "rank-0")
    one_line_error(cli("compile", str(ROOT / "fuzz" / "regressions" / "onnx" / f"{name}.onnx"), "-o", os.devnull), "rank-0")


def test_pool_stride_of_int64_max_matches_onnxruntime():
    # Found by the structure-aware fuzzer: a stride of INT64_MAX overflowed the window and
    # slice arithmetic (UBSan); a valid model (one window per axis), so it must compute.
    import onnx
    import onnxruntime as ort
    data = (ROOT / "fuzz" / "regressions" / "onnx" / "average-pool-stride-int64-max.onnx").read_bytes()
    x = np.random.default_rng(0).standard_normal((1, 1, 32, 32, 32)).astype(np.float32)
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = np.asarray(list(trnsim.compile_onnx(data).run({"x": x}).values())[0])
    np.testing.assert_allclose(got.reshape(ref.shape), ref, atol=1e-6)
    assert onnx.load_from_string(data).graph.node[0].attribute  # the stride attribute is there


# The 30-minute onnx_structured campaigns' findings (docs/hardening.md): each input (a UBSan
# overflow, a 80-96 GiB allocation, a kernel unrolled for ever) is one line naming the node
# and what is wrong, under the fuzzers' 1 GiB memory limit.
@pytest.mark.parametrize("name, needle", [
    ("gru-hidden-size-int64-min", "hidden_size -9223372036854775808"),
    ("gru-hidden-size-int64-max", "hidden_size 9223372036854775807"),
    ("gru-batch-2pow31-initial-state", "initial state [2147483647,5]"),
    ("instance-norm-2pow32-wide-constants", "a row of 12884901888 values"),
    ("layer-norm-2pow31-wide-params", "a row of"),
    ("concat-axis-sum-past-int64", "Concat axis size"),
    ("conv-transpose-group-inf", "attribute group = inf is not an integer"),
    ("conv-transpose-kernel-2pow40-taps", "trnsim unrolls at most 4096"),
    ("hbm-io-bytes-sum-overflow", "the model's HBM bytes: shape too large"),
    ("gelu-dim-int64-max-units", "shape too large"),
    ("trilu-2pow40-wide-mask", "mask [7,1099511627776] needs about"),
])
def test_onnx_structured_campaign_findings_are_one_line(name, needle):
    path = ROOT / "fuzz" / "regressions" / "onnx" / f"{name}.onnx"
    one_line_error(cli("compile", str(path), "-o", os.devnull, "--dtype", "bf16", env={"TRNSIM_MAX_MEMORY": "1G"}), needle)


# Round 6 (docs/hardening.md): declared dims near 2^62 or INT64_MAX reached the parallel-units
# estimates (core-split), the conv band planning (decomposition) and SBUF residency before the
# HBM plan bounds them: signed overflow under UBSan, and for the MatMul a wrapped resident
# size that ended in `internal error: std::bad_alloc` (exit 3) in the Release build. Each is
# now exit 2, one line naming the node or tensor, on the CLI's whole path (compile, link,
# timing run) and under the fuzzers' 1 GiB limit.
@pytest.mark.parametrize("name, needle", [
    ("matmul-rows-int64-max-units", "shape too large"),
    ("conv-rows-2pow62-plan", "node 'Conv_0': Conv over [1,1,4611686018427387904,1]"),
    ("conv-batch-int64-max-bands", "node 'Conv_0': Conv over [9223372036854775807,1,1,1]"),
    ("depthwise-conv-batch-int64-max-bands", "node 'Conv_0': Conv over [9223372036854775807,"),
    ("maxpool-rows-int64-max-band", "node 'MaxPool_0': pooling over [1,1,9223372036854775807,1]"),
])
@pytest.mark.parametrize("limit", [None, "1G"])
def test_round6_huge_dims_before_the_hbm_plan_are_one_line(name, needle, limit):
    path = ROOT / "fuzz" / "regressions" / "onnx" / f"{name}.onnx"
    env = {"TRNSIM_MAX_MEMORY": limit} if limit else None
    one_line_error(cli("run", str(path), "--timing-only", env=env), needle)


def test_rnn_unrolled_over_4096_steps_compiles_in_linear_time(tmp_path):
    # Round 6 (onnx_structured timeout): an RNN over 4,096 steps (layout 1) unrolls to ~25,000
    # nodes; the epilogue fusion restarted its scan and rebuilt its maps after every fusion and
    # dead-code elimination scanned every node per tensor, so the compile ran past 120 s of CPU
    # (28 s after the first fix). Now about 2.5 s; the bound is CPU seconds, not wall time.
    import resource
    path = ROOT / "fuzz" / "regressions" / "onnx" / "rnn-batchwise-4096-steps-quadratic-fusion.onnx"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    p = cli("compile", str(path), "-o", str(tmp_path / "rnn.tpg"), timeout=300)
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
    assert p.returncode == 0, p.stderr
    assert cpu < 30, cpu


@pytest.mark.parametrize("steps,ok", [(4096, True), (4097, False)])
def test_rnn_step_bound_is_the_rnns_own_one_line_error(tmp_path, steps, ok):
    # The unrolled steps are joined by one Concat, bounded at 4,096 inputs: past it the refusal
    # named the internal Concat ("node 'RNN_0.concat' (Concat) has 4097 inputs") while the RNN's
    # own bound said 65,536. Now the RNN refuses in its own words at the Concat's bound.
    from onnx import TensorProto, helper, numpy_helper
    import numpy as np
    inits = [numpy_helper.from_array(np.full((1, 1, 1), 0.5, np.float32), n) for n in ("W", "R")]
    node = helper.make_node("RNN", ["X", "W", "R"], ["Y"], name="rnn", hidden_size=1)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [steps, 1, 1])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], initializer=inits)
    path = tmp_path / "rnn.onnx"
    path.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString())
    p = cli("run", str(path), "--timing-only", timeout=300)
    if ok:
        assert p.returncode == 0, p.stderr
    else:
        one_line_error(p, "node 'rnn': RNN over 4097 steps", "at most 4096 steps")


def _chained_attention_blocks(blocks: int) -> bytes:
    # `blocks` attention blocks in a chain (Q/K/V projections, heads by Reshape/Transpose,
    # softmax(Q K^T / sqrt(d)) V), each block's output the next one's input; 16 x 16 weights.
    from onnx import TensorProto, helper as h, numpy_helper as nh
    B, S, H, D = 1, 256, 2, 8
    E = H * D
    w = nh.from_array(np.full((E, E), 0.01, np.float32), "W")
    inits = [w, nh.from_array(np.array([B, S, H, D], np.int64), "heads"), nh.from_array(np.array([B, S, E], np.int64), "flat"),
             nh.from_array(np.array(np.sqrt(D), np.float32), "scale")]
    nodes = []
    for b in range(blocks):
        x, y = ("x" if b == 0 else f"y{b - 1}"), ("y" if b == blocks - 1 else f"y{b}")
        for r in "qkv":
            nodes += [h.make_node("MatMul", [x, "W"], [f"{r}m{b}"]), h.make_node("Reshape", [f"{r}m{b}", "heads"], [f"{r}4{b}"])]
        nodes += [h.make_node("Transpose", [f"q4{b}"], [f"qh{b}"], perm=[0, 2, 1, 3]),
                  h.make_node("Transpose", [f"k4{b}"], [f"kt{b}"], perm=[0, 2, 3, 1]),
                  h.make_node("Transpose", [f"v4{b}"], [f"vh{b}"], perm=[0, 2, 1, 3]),
                  h.make_node("MatMul", [f"qh{b}", f"kt{b}"], [f"s{b}"]), h.make_node("Div", [f"s{b}", "scale"], [f"ss{b}"]),
                  h.make_node("Softmax", [f"ss{b}"], [f"p{b}"], axis=-1), h.make_node("MatMul", [f"p{b}", f"vh{b}"], [f"o4{b}"]),
                  h.make_node("Transpose", [f"o4{b}"], [f"ot{b}"], perm=[0, 2, 1, 3]), h.make_node("Reshape", [f"ot{b}", "flat"], [y])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TensorProto.FLOAT, [B, S, E])],
                     [h.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, E])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()


def test_attention_and_qkv_fusion_are_linear_in_the_blocks(tmp_path):
    # attention-fusion rebuilt its producer/consumer maps for every Softmax it tried and
    # restarted after each fusion; qkv-fusion restarted and copied the node list per fusion:
    # 800 chained blocks spent 10.3 s in attention-fusion (0.58 s at 200: quadratic). Now one
    # pass each with the maps built once: ~0.04 s. Every block still fuses (800 attention
    # nodes, 800 projection MatMuls each with its K and V fused in).
    path = tmp_path / "attn800.onnx"
    path.write_bytes(_chained_attention_blocks(800))
    p = cli("compile", str(path), "--chip", "trn1", "-o", str(tmp_path / "a.tpg"), "--json", timeout=300)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    times = {q["name"]: q["time_s"] for q in rep["passes"] if q["name"] in ("attention-fusion", "qkv-fusion")}
    assert sum(times.values()) < 2.0, times
    p = cli("run", str(tmp_path / "a.tpg"), "--timing-only", "--json", timeout=300)
    assert p.returncode == 0, p.stderr
    ops = [o["op"] for o in json.loads(p.stdout)["ops"]]
    assert ops.count("FusedAttention") == 800 and ops.count("MatMul") == 800 and len(ops) == 1600, len(ops)


def test_a_long_strided_stream_is_tracked_in_linear_time():
    # The tracker's phase index grouped records by residue alone: the 8,192 output blocks of
    # `kernel transpose --cols 2^20` all share a residue, so every store met every earlier one
    # (27 s; 2^22 columns 521 s, round 8 CLI sweep). Residue groups are now keyed by address
    # too: 0.2 s. The simulated time equals the DMA-bound closed form's order: the same as the
    # 2^18-column run scaled by 4 within 1%.
    import time
    def run(cols):
        t0 = time.perf_counter()
        p = cli("kernel", "transpose", "--cols", str(cols), "--timing-only", "--json", timeout=120)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)["time_s"], time.perf_counter() - t0
    small, _ = run(1 << 18)
    big, wall = run(1 << 20)
    assert wall < 10, wall
    assert abs(big / small - 4) < 0.04, (big, small)


@pytest.mark.parametrize("op,int_input", [("Unsqueeze", 1), ("Slice", 1), ("Tile", 1), ("Reshape", 1)])
def test_an_integer_input_given_as_float_is_a_one_line_type_error(tmp_path, op, int_input):
    # Round 8 (onnx_structured, UBSan): an Unsqueeze whose axes were a float weight holding NaN;
    # the NaN was cast to int64 (undefined). Axes, starts, repeats and shapes are int64 in ONNX:
    # a float tensor there is refused naming the input; the int64 model matches onnxruntime.
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    consts = {"Unsqueeze": [np.array([0], np.int64)], "Slice": [np.array([0], np.int64), np.array([2], np.int64)],
              "Tile": [np.array([2, 1], np.int64)], "Reshape": [np.array([3, 2], np.int64)]}[op]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def model(float_ints):
        inits = [numpy_helper.from_array(c.astype(np.float32) if (i + 1 == int_input and float_ints) else c, f"c{i}")
                 for i, c in enumerate(consts)]
        if float_ints:
            inits[int_input - 1] = numpy_helper.from_array(np.array([np.nan] + [0.0] * (consts[int_input - 1].size - 1), np.float32),
                                                           f"c{int_input - 1}")
        node = helper.make_node(op, ["x"] + [f"c{i}" for i in range(len(consts))], ["y"], name="n")
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 9
        return m.SerializeToString()
    path = tmp_path / "m.onnx"
    path.write_bytes(model(True))
    one_line_error(cli("run", str(path)), f"node 'n' ({op}): input {int_input} 'c{int_input - 1}' is f32", "integer tensor")
    want = ort.InferenceSession(model(False), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = np.asarray(trnsim.compile_onnx(model(False), dtype="fp32").run({"x": x})["y"])
    np.testing.assert_array_equal(got, want)


def test_gather_elements_one_hot_size_is_checked_arithmetic(tmp_path):
    # Round 8 (onnx_structured, UBSan): run-time indices of 2^23 rows over an axis of 2^41: the
    # one-hot's size numel(indices) x D overflowed int64 before its bound was checked.
    from onnx import TensorProto, helper
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=0)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 41, 1]),
                                        helper.make_tensor_value_info("i", TensorProto.INT64, [1 << 23, 1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "ge.onnx"
    path.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    one_line_error(cli("run", str(path), "--timing-only"), "node 'ge': GatherElements one-hot: shape too large")


def test_unsqueeze_repeated_axes_are_refused_and_distinct_ones_match_onnxruntime():
    # Round 8 (onnx_run_structured, ASan negative-size-param): Unsqueeze of a rank-1 tensor with
    # axes [2, 2] took the output rank from the axes input's declared shape and inserted past the
    # end. ONNX refuses repeated axes (onnxruntime too); distinct ones equal onnxruntime.
    import onnxruntime as ort
    path = ROOT / "fuzz" / "regressions" / "onnx" / "unsqueeze-repeated-high-axis-past-end-asan.onnx"
    one_line_error(cli("run", str(path), "--timing-only"), "node 'Unsqueeze_0' (Unsqueeze): axis 2 given twice")
    from onnx import TensorProto, helper, numpy_helper
    g = helper.make_graph([helper.make_node("Unsqueeze", ["x", "axes"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.array([3, 0, -1], np.int64), "axes")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = np.asarray(trnsim.compile_onnx(m.SerializeToString(), dtype="fp32").run({"x": x})["y"])
    assert got.shape == want.shape == (1, 2, 3, 1, 1)
    np.testing.assert_array_equal(got, want)


def test_float_to_integer_cast_of_non_finite_values_matches_the_host_folding():
    # Round 6 (differential run of the onnx_run_structured corpus): on the device, a cast of
    # -inf or NaN to an integer type truncated through fmod and left NaN in the integer tensor
    # (a uint8 Add then gave NaN), where the same Cast folded on the host (a constant input)
    # gives 0 (ONNX leaves the value undefined; onnxruntime gives 0 for uint8). Finite values
    # against onnxruntime, non-finite ones against the host folding of the same graph.
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    x = np.array([2.7, -1.5, 0.4, 250.0, -np.inf, np.inf, np.nan, 3.0], np.float32)
    for to, np_t in ((TensorProto.UINT8, np.uint8), (TensorProto.INT32, np.int32), (TensorProto.INT4, None)):
        nodes = [helper.make_node("Cast", ["x"], ["c"], to=to), helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)]
        if np_t is not None:
            nodes = [nodes[0], helper.make_node("Add", ["c", "k"], ["s"]), helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT)]
        inits = [numpy_helper.from_array(np.ones(8, np_t), "k")] if np_t is not None else []
        def model(const):
            ins = [] if const else [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])]
            init = inits + ([numpy_helper.from_array(x, "x")] if const else [])
            g = helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])], initializer=init)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
            m.ir_version = 10
            return m.SerializeToString()
        device = np.asarray(trnsim.compile_onnx(model(False), dtype="fp32").run({"x": x})["y"])
        host = np.asarray(trnsim.compile_onnx(model(True), dtype="fp32").run({})["y"])
        assert np.array_equal(device, host), (to, device, host)
        assert not np.isnan(device).any()
        if np_t is not None:
            want = ort.InferenceSession(model(False), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
            finite = np.isfinite(x)
            assert np.array_equal(device[finite], want[finite]), (to, device, want)


@pytest.mark.parametrize("op", ["ReduceSum", "ArgMax"])
def test_round7_keepdims_other_than_0_or_1_is_refused_and_0_1_match_onnxruntime(op):
    """keepdims = 2^32 kept the axes where onnxruntime gives a scalar (fuzz round 7,
    fuzz/regressions/onnx/reducesum-keepdims-2pow32.onnx): now refused; 0 and 1 still agree."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    def model(keep: int) -> bytes:
        attrs = {"keepdims": keep} if op == "ReduceSum" else {"keepdims": keep, "axis": 1}
        g = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT if op == "ReduceSum" else TensorProto.INT64, None)])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()

    x = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], dtype=np.float32)
    for keep in (0, 1):
        exp = ort.InferenceSession(model(keep), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        got = np.asarray(trnsim.compile_onnx(model(keep), dtype="fp32").run({"x": x})["y"])
        assert got.shape == exp.shape, (keep, got.shape, exp.shape)
        np.testing.assert_allclose(got, exp, rtol=1e-6)
    for keep in (2, -1, 1 << 32):
        with pytest.raises(trnsim.TrnsimError, match=f"keepdims = {keep}, expected 0 or 1"):
            trnsim.compile_onnx(model(keep), dtype="fp32")
