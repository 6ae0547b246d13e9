"""Re-verifies the findings of issue 17 on this tree through the CLI and the Python API (a
diagnostic, not a test: tests/python/test_hardening.py holds the tests). One line per finding,
PASS/FAIL and what was seen; NaN cases against onnxruntime (values to 1e-6, NaN positions exact).

    PYTHONPATH=python .venv/bin/python fuzz/verify_findings.py"""
import json, os, subprocess, sys, tempfile, zipfile, io
from pathlib import Path
import numpy as np
import onnx
from onnx import TensorProto as TP, helper
import onnxruntime as ort

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
import trnsim
CLI = str(ROOT / "build/src/trnsim")
TMP = Path(tempfile.mkdtemp())
n = helper.make_node
results = []


def vi(name, shape, elem=TP.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8  # onnxruntime 1.31 reads IR <= 10
    return m


def cli(*args, env=None, timeout=120, stdout=subprocess.PIPE):
    try:
        return subprocess.run([CLI, *args], stdout=stdout, stderr=subprocess.PIPE, timeout=timeout,
                              env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        return None


def one_line(p, *needles):
    if p is None:
        return False, "TIMEOUT"
    err = p.stderr.decode("utf-8", "replace")
    last = err.strip().splitlines()[-1] if err.strip() else ""
    ok = p.returncode == 2 and last.startswith("trnsim: error: ") and all(x in last for x in needles)
    return ok, f"rc={p.returncode} {last[:200]}"


def record(name, ok, detail):
    results.append((name, ok))
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}", flush=True)


def check(name):
    def deco(f):
        try:
            ok, detail = f()
        except Exception as e:
            ok, detail = False, f"raised {type(e).__name__}: {str(e)[:200]}"
        record(name, ok, detail)
        return f
    return deco


def py_error(m, feeds=None, needle="", **kw):
    data = m.SerializeToString() if hasattr(m, "SerializeToString") else m
    try:
        c = trnsim.compile_onnx(data, **kw)
        c.run(feeds or {})
        return False, "accepted"
    except trnsim.TrnsimError as e:
        return needle in str(e) and "\n" not in str(e), f"TrnsimError: {str(e)[:200]}"


def ort_run(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def sim_run(m, feeds, **kw):
    c = trnsim.compile_onnx(m.SerializeToString(), **kw)
    out = c.run(feeds)
    return [np.asarray(v) for v in out.values()]


X = np.array([[np.nan, -1.0, 0.5], [2.0, np.nan, -np.inf]], np.float32)

# ---- NaN propagation (compare onnxruntime, NaN positions and values, atol 1e-6 / bf16 none used) ----
for op, extra, inits, attrs in [("Relu", [], [], {}), ("Sign", [], [], {}), ("HardSigmoid", [], [], {}),
                                ("Clip", ["lo", "hi"], [helper.make_tensor("lo", TP.FLOAT, [], [-0.5]), helper.make_tensor("hi", TP.FLOAT, [], [1.0])], {}),
                                ("Max", ["b"], [helper.make_tensor("b", TP.FLOAT, [3], [0.0, 0.0, np.nan])], {}),
                                ("Min", ["b"], [helper.make_tensor("b", TP.FLOAT, [3], [0.0, 0.0, np.nan])], {}),
                                ("Max", ["x2"], [], {}), ("Min", ["x2"], [], {}), ("Clip", ["lo2", "hi2"], [], {})]:
    ins = [vi("x", [2, 3])] + ([vi("x2", [2, 3])] if "x2" in extra else []) + \
          ([vi("lo2", []), vi("hi2", [])] if "lo2" in extra else [])
    m = model([n(op, ["x", *extra], ["y"], **attrs)], ins, [vi("y", [2, 3])], inits)
    feeds = {"x": X}
    if "x2" in extra:
        feeds["x2"] = np.array([[1.0, np.nan, 0.0], [np.nan, 3.0, 1.0]], np.float32)
    if "lo2" in extra:
        feeds["lo2"], feeds["hi2"] = np.array(-0.5, np.float32), np.array(1.0, np.float32)
    for mode in ("device", "folded"):
        name = f"NaN through {op}({', '.join(extra) or 'x'}) [{mode}]"
        @check(name)
        def _():
            ref = ort_run(m, feeds)[0]
            if mode == "folded":  # every input an initializer: evaluated on the host at compile time
                mm = onnx.ModelProto(); mm.CopyFrom(m)
                for k, v in feeds.items():
                    mm.graph.initializer.append(onnx.numpy_helper.from_array(np.asarray(v, np.float32), k))
                del mm.graph.input[:]
                got = sim_run(mm, {})[0]
            else:
                got = sim_run(m, feeds)[0]
            got = got.reshape(ref.shape)
            ok = np.array_equal(np.isnan(got), np.isnan(ref)) and np.allclose(np.nan_to_num(got), np.nan_to_num(ref), atol=1e-6)
            return ok, f"ort={ref.tolist()} sim={got.tolist()}"

# ---- ReduceMax with NaN (numpy/ORT propagate) ----
@check("NaN through ReduceMax (onnx.reference)")
def _():
    m = model([n("ReduceMax", ["x"], ["y"], keepdims=0, axes=[1])], [vi("x", [2, 3])], [vi("y", [2])], opset=17)
    from onnx.reference import ReferenceEvaluator  # onnxruntime's answer depends on the NaN's position
    ref = ReferenceEvaluator(m).run(None, {"x": X})[0]; got = sim_run(m, {"x": X})[0].reshape(ref.shape)
    return np.array_equal(np.isnan(got), np.isnan(ref)), f"onnx.reference={ref.tolist()} sim={got.tolist()}"

# ---- type constraint ----
@check("Add(float, int64) refused (Python)")
def _():
    m = model([n("Add", ["x", "c"], ["y"])], [vi("x", [3])], [vi("y", [3])], [helper.make_tensor("c", TP.INT64, [3], [1, 2, 3])])
    return py_error(m, {"x": np.zeros(3, np.float32)}, "type")

@check("Add(float, int64 Constant value_ints) refused (CLI)")
def _():
    p = ROOT / "fuzz/pending/onnx/constant-ints-attr.onnx"
    if not p.exists():
        p = ROOT / "fuzz/regressions/onnx/constant-ints-attr.onnx"
    return one_line(cli("run", str(p)), "type")

@check("Pow(float, int64) still accepted (ONNX allows T1)")
def _():
    m = model([n("Pow", ["x", "c"], ["y"])], [vi("x", [3])], [vi("y", [3])], [helper.make_tensor("c", TP.INT64, [], [2])])
    x = np.array([1, 2, 3], np.float32)
    got = sim_run(m, {"x": x})[0]; ref = ort_run(m, {"x": x})[0]
    return np.allclose(got.reshape(3), ref, rtol=1e-6), f"{got.tolist()} vs {ref.tolist()}"

@check("Equal(float, int64) refused")
def _():
    m = model([n("Equal", ["x", "c"], ["y"])], [vi("x", [3])], [vi("y", [3], TP.BOOL)], [helper.make_tensor("c", TP.INT64, [3], [1, 2, 3])])
    return py_error(m, {"x": np.zeros(3, np.float32)}, "type")

# ---- --dim ----
dyn = model([n("Relu", ["x"], ["y"])], [vi("x", ["batch", "seq"])], [vi("y", ["batch", "seq"])])
(TMP / "dyn.onnx").write_bytes(dyn.SerializeToString())

@check("unknown --dim name refused (CLI)")
def _():
    return one_line(cli("run", str(TMP / "dyn.onnx"), "--dim", "sqe=4"), "sqe", "seq")

@check("known --dim name accepted (CLI)")
def _():
    p = cli("run", str(TMP / "dyn.onnx"), "--dim", "seq=4", "--json")
    return p.returncode == 0 and json.loads(p.stdout)["time_s"] > 0, f"rc={p.returncode}"

@check("unknown dims name refused (Python)")
def _():
    try:
        trnsim.compile_onnx(dyn.SerializeToString(), dims={"sqe": 4})
        return False, "accepted"
    except trnsim.TrnsimError as e:
        return "sqe" in str(e), str(e)[:200]

@check("known dims + run with other shapes (Python)")
def _():
    c = trnsim.compile_onnx(dyn.SerializeToString(), dims={"seq": 4})
    x = np.ones((2, 5), np.float32) * -1
    y = np.asarray(list(c.run({"x": x}).values())[0])
    return np.array_equal(y.reshape(2, 5), np.zeros((2, 5))), "ok"

# ---- other findings through the CLI ----
@check("Range NaN delta refused")
def _():
    m = model([n("Range", ["a", "b", "d"], ["y"])], [], [vi("y", None)],
              [helper.make_tensor(k, TP.FLOAT, [], [v]) for k, v in (("a", 0.0), ("b", 10.0), ("d", float("nan")))])
    return py_error(m, {}, "")

@check("Selu with attributes of the wrong type")
def _():
    m = model([n("Selu", ["x"], ["y"], alpha=[1, 2], gamma="str")], [vi("x", [2, 3])], [vi("y", [2, 3])])
    return py_error(m, {"x": np.zeros((2, 3), np.float32)}, "")

@check("malformed Constant (no value)")
def _():
    m = model([n("Constant", [], ["c"]), n("Add", ["x", "c"], ["y"])], [vi("x", [2])], [vi("y", [2])])
    return py_error(m, {"x": np.zeros(2, np.float32)}, "")

@check("attention pattern in timing-only mode (CLI)")
def _():
    q = vi("q", [1, 4, 128, 64]); k = vi("k", [1, 4, 64, 128]); v = vi("v", [1, 4, 128, 64])
    m = model([n("MatMul", ["q", "k"], ["s"]), n("Mul", ["s", "sc"], ["s2"]), n("Softmax", ["s2"], ["p"], axis=-1),
               n("MatMul", ["p", "v"], ["y"])], [q, k, v], [vi("y", [1, 4, 128, 64])],
              [helper.make_tensor("sc", TP.FLOAT, [], [0.125])])
    (TMP / "att.onnx").write_bytes(m.SerializeToString())
    p = cli("run", str(TMP / "att.onnx"), "--timing-only", "--json")
    return p is not None and p.returncode == 0, f"rc={p and p.returncode} {p and p.stderr.decode()[-200:]}"

@check("declared 10^6-wide dim bounded")
def _():
    m = model([n("Relu", ["x"], ["y"])], [vi("x", [1000000, 1000000])], [vi("y", [1000000, 1000000])])
    (TMP / "wide.onnx").write_bytes(m.SerializeToString())
    p = cli("run", str(TMP / "wide.onnx"), timeout=60, env={"TRNSIM_MAX_MEMORY": "4G"})
    return one_line(p, "")

@check("huge-matmul ONNX in timing-only mode is bounded")
def _():
    m = model([n("MatMul", ["a", "b"], ["y"])], [vi("a", [65536, 65536]), vi("b", [65536, 65536])], [vi("y", [65536, 65536])])
    (TMP / "mm.onnx").write_bytes(m.SerializeToString())
    p = cli("run", str(TMP / "mm.onnx"), "--timing-only", "--json", timeout=120, env={"TRNSIM_MAX_MEMORY": "4G"})
    if p is None:
        return False, "TIMEOUT"
    return p.returncode in (0, 2), f"rc={p.returncode} {p.stderr.decode()[-200:]}"

@check("/dev/zero as a model")
def _():
    return one_line(cli("run", "/dev/zero", timeout=60), "")

@check("zip-bomb .npz refused (CLI --inputs)")
def _():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        d = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1610612736,), }".ljust(117) + b"\n"
        hdr = b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d
        z.writestr("x.npy", hdr + b"\0" * (64 << 20))
    (TMP / "bomb.npz").write_bytes(buf.getvalue())
    (TMP / "r.onnx").write_bytes(model([n("Relu", ["x"], ["y"])], [vi("x", [4])], [vi("y", [4])]).SerializeToString())
    return one_line(cli("run", str(TMP / "r.onnx"), "--inputs", str(TMP / "bomb.npz"), env={"TRNSIM_MAX_MEMORY": "1G"}), "")

@check("HBM capacity 0.5 B refused")
def _():
    t = (ROOT / "configs/chips/trn2.yaml").read_text()
    import re
    t2 = re.sub(r"capacity: [^\n#]*", "capacity: 0.5 B ", t, count=1)
    (TMP / "c.yaml").write_text(t2)
    return one_line(cli("specs", "--chip", str(TMP / "c.yaml")), "capacity")

@check("tiny bandwidth names the field")
def _():
    t = (ROOT / "configs/chips/trn2.yaml").read_text()
    import re
    t2, k = re.subn(r"bandwidth: [^\n#]*", "bandwidth: 1 B/s ", t, count=1)
    (TMP / "b.yaml").write_text(t2)
    return one_line(cli("kernel", "matmul", "--chip", str(TMP / "b.yaml")), "bandwidth")

@check("--json to /dev/full is an error")
def _():
    with open("/dev/full", "wb") as f:
        p = cli("specs", "--json", stdout=f)
    return p.returncode == 2, f"rc={p.returncode}"

@check("collective 2^59 bytes refused")
def _():
    return one_line(cli("collective", "--op", "all-reduce", "--ranks", "16", "--system", "trn1.32xlarge", "--sizes", "536870912G"), "HBM")

@check("ring on 10^7 ranks refused up front")
def _():
    return one_line(cli("collective", "--op", "all-reduce", "--systems", "800", "--ranks", "10000000", "--system", "trn2.48xlarge",
                        "--sizes", "1G", "--algorithm", "ring", timeout=120), "")

@check("kernel layernorm --chunk 100 right")
def _():
    p = cli("kernel", "layernorm", "--rows", "4", "--cols", "1000", "--chunk", "100", "--functional", "--json")
    c = json.loads(p.stdout)["check"]
    return all(v["violations"] == 0 for v in c.values()), str(c)[:200]

@check("argument parser errors exit 2")
def _():
    return one_line(cli("kernel", "matmul", "--m", "x"))

@check("non-UTF-8 names in ONNX")
def _():
    m = model([n("Relu", ["x"], ["y"], name="nQQQ")], [vi("x", [2])], [vi("y", [2])])
    data = m.SerializeToString().replace(b"nQQQ", b"n\xff\xfe\xfd")
    (TMP / "nu.onnx").write_bytes(data)
    p = cli("run", str(TMP / "nu.onnx"), "--json")
    return p.returncode in (0, 2) and b"internal error" not in p.stderr, f"rc={p.returncode} {p.stderr[-200:]}"

@check("kernel matmul 65536^3 refused up front")
def _():
    return one_line(cli("kernel", "matmul", "--m", "65536", "--k", "65536", "--n", "65536", env={"TRNSIM_MAX_MEMORY": "4G"}), "limit")

SERVE = ("serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge")


@check("trace NaN timestamp refused (serve)")
def _():
    (TMP / "t.csv").write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n0,10,10\nnan,10,10\n")
    return one_line(cli(*SERVE, "--tp", "8", "--trace", str(TMP / "t.csv")), "TIMESTAMP")

@check("serve --tp 2^32+8 refused")
def _():
    return one_line(cli(*SERVE, "--tp", "4294967304", "--requests", "2"), "tp")

@check("/dev/zero as a trace bounded")
def _():
    return one_line(cli(*SERVE, "--tp", "8", "--trace", "/dev/zero",
                        env={"TRNSIM_MAX_MEMORY": "1G"}, timeout=60), "")

# ---- round 3: axes of rank-0 tensors (each segfaulted or was accepted against ONNX) ----
for f in ("argmax-rank0", "argmin-rank0", "cumsum-rank0", "scatter-elements-rank0", "resize-axes-rank0",
          "softmax-axis0-rank0", "reduce-sum-axes0-rank0", "onehot-rank0-indices"):
    @check(f"{f} refused on one line (CLI run)")
    def _(f=f):
        return one_line(cli("run", str(ROOT / "fuzz/regressions/onnx" / f"{f}.onnx")), "node '")

    @check(f"{f} refused (Python)")
    def _(f=f):
        return py_error((ROOT / "fuzz/regressions/onnx" / f"{f}.onnx").read_bytes(), needle="node '")

@check("Unsqueeze of a scalar still accepted (ONNX allows it)")
def _():
    m = model([n("Unsqueeze", ["s", "a"], ["y"])], [vi("s", [])], [vi("y", [1])],
              [helper.make_tensor("a", TP.INT64, [1], [0])])
    feeds = {"s": np.array(0.7, np.float32)}
    ref, got = ort_run(m, feeds)[0], sim_run(m, feeds)[0]
    return np.allclose(got.reshape(ref.shape), ref), f"ort={ref.tolist()} sim={got.tolist()}"

# ---- round 3 fuzzing: a .tpg constant whose count times 8 overflowed int64 (UBSan, fuzz tpg) ----
@check("forged .tpg constant count past int64 bytes (CLI run)")
def _():
    return one_line(cli("run", str(ROOT / "fuzz/regressions/tpg/constant-count-times-8-overflow")), "tensor constant count")

@check("Slice without its ends input (opset 17) refused on one line (fuzz, onnx: std::out_of_range)")
def _():
    return one_line(cli("run", str(ROOT / "fuzz/regressions/onnx/slice-without-ends.onnx")), "starts and ends")

@check("AveragePool over a declared 2^40-wide input refused up front (fuzz, onnx_structured: 16 GiB then bad_alloc)")
def _():
    return one_line(cli("compile", str(ROOT / "fuzz/regressions/onnx/average-pool-divisors-2pow40-wide.onnx"), "-o", os.devnull,
                        env={"TRNSIM_MAX_MEMORY": "1G"}, timeout=60), "TRNSIM_MAX_MEMORY")

@check("AveragePool with a stride of INT64_MAX computes like onnxruntime (fuzz, onnx_structured: UBSan overflow)")
def _():
    m = onnx.load(str(ROOT / "fuzz/regressions/onnx/average-pool-stride-int64-max.onnx"))
    x = np.random.default_rng(0).standard_normal((1, 1, 32, 32, 32)).astype(np.float32)
    ref, got = ort_run(m, {"x": x})[0], sim_run(m, {"x": x})[0]
    return np.allclose(got.reshape(ref.shape), ref, atol=1e-6), f"max |diff| {np.abs(got.reshape(ref.shape) - ref).max():.2e}"

print(f"\n{sum(ok for _, ok in results)}/{len(results)} pass")
