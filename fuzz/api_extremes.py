"""The Python API at extreme values (issue 17, docs/hardening.md round 8).

Each public entry point (trnsim.llm, serve, train, compare, collective, kernel, compile_onnx and
a compiled model's run) is called with one argument at a time replaced by a wrong type, NaN,
inf, zero, a negative, 2^31, 2^63, 2^64, 1e308, "", a 100 kB string or bytes. Each call runs in
a forked child (60 s alarm, TRNSIM_MAX_MEMORY=2G). A finding: an exception that is not a
trnsim.TrnsimError, a message of more than one line, a crash, a timeout, or a result with NaN,
inf or a negative time/energy/cost. A call that returns on a meaningless value is "accepted".

    nice -n 10 .venv/bin/python fuzz/api_extremes.py [--only llm,serve,...]
"""
import argparse
import json
import os
import pickle
import signal
import sys
import tempfile
import time

os.environ["TRNSIM_MAX_MEMORY"] = "2G"
import numpy as np  # noqa: E402

import trnsim  # noqa: E402
from cli_extremes import bad_numbers  # noqa: E402  (NaN/inf, negative times; arrays are skipped)

NAN = float("nan")
VALUES = [0, -1, 1.5, 2**31, 2**63, 2**64, 1e308, -1e308, NAN, float("inf"), float("-inf"), 1e-300, "", "x",
          "7" * 100_000, b"\xff\xfe", None, [1], {"a": 1}, True]
MEANINGLESS = {"-1", "2147483648", "9223372036854775808", "18446744073709551616", "1e+308", "-1e+308", "nan",
               "inf", "-inf", "''", "'x'", "b'\\xff\\xfe'", "None", "[1]", "{'a': 1}"}


def tiny_model():
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.ones((64, 64), np.float32), "W")
    g = helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["Y"])], "g",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", "seq", 64])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", "seq", 64])], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


MODEL = tiny_model()
TMP = tempfile.mkdtemp(prefix="api_extremes_")


def run_compiled(batch=1, seq=8, x_scale=1.0, timing_only=False):
    m = trnsim.compile_onnx(MODEL, dims={"seq": seq}, batch=batch)
    x = np.full((batch, seq, 64), x_scale, np.float32) if isinstance(x_scale, (int, float)) else x_scale
    return m.run({"X": x}, mode="timing" if timing_only else None)


# (name, function, valid keyword arguments): each keyword is varied in turn.
APIS = [
    ("llm", trnsim.llm, dict(model="llama-3.1-8b", system="trn2.48xlarge", tp=4, batch=1, input=128, output=16,
                              pp=1, ep=1, lnc=0, dtype="bf16", weights="bf16", kv_dtype="bf16", micro_batches=0,
                              clock_scale=1.0, seq_len=0, power_cap=None, power_cap_scope="chip")),
    ("serve", trnsim.serve, dict(model="llama-3.1-8b", system="trn2.48xlarge", tp=4, rate=5, requests=40,
                                  max_seqs=256, block_tokens=16, hbm_utilization=0.9, seed=0, input="512",
                                  output="128", replicas=1, duration=None, clock_scale=1.0, pue=1.15)),
    ("train", trnsim.train, dict(model="llama-3.1-8b", system="trn1.32xlarge", global_batch=8, seq=512, nodes=1,
                                  tp=32, pp=1, dp=None, ep=1, cp=1, zero=0, micro_batch=1, virtual_stages=1,
                                  tokens=1e9, mtbf_hours=86300.0, checkpoint_gbps=2.0, fail_at=None,
                                  degraded_link=1.0, straggler_slowdown=1.0)),
    ("compare", trnsim.compare, dict(model="llama-3.1-8b", systems=["trn2.48xlarge", "p5.48xlarge"],
                                      tp={"trn2.48xlarge": 4, "p5.48xlarge": 1}, rate=5, requests=40, replicas=1,
                                      pue=1.15, kwh_usd=0.08, attainment=0.99, max_replicas=256)),
    ("collective", trnsim.collective, dict(op="all-reduce", ranks=None, system="trn2.48xlarge", sizes="1M",
                                            dtype="fp32")),
    ("kernel_matmul", trnsim.kernel, dict(name="matmul", m=128, k=128, n=512, seed=0)),
    ("kernel_layernorm", trnsim.kernel, dict(name="layernorm", rows=128, cols=1024, chunk=0, timing_only=True)),
    ("kernel_attention", trnsim.kernel, dict(name="attention", heads=1, seq=128, head_dim=64, timing_only=True)),
    ("compile_onnx", trnsim.compile_onnx, dict(model=MODEL, chip="trn2", dtype="fp32", mode="functional", batch=1,
                                                dims={"seq": 8}, cores=0, lnc=0)),
    ("compiled_run", run_compiled, dict(batch=1, seq=8, x_scale=1.0, timing_only=False)),
]


def call(fn, kwargs) -> dict:
    """The call in a forked child: its outcome, or how it died."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(60)
        try:
            res = fn(**kwargs)
            if hasattr(res, "__dict__") and not isinstance(res, dict):
                res = {}
            bad = bad_numbers(res)
            out = {"verdict": "finding" if bad else "ok", "why": ", ".join(bad[:4])}
        except trnsim.TrnsimError as e:
            msg = str(e)
            out = {"verdict": "refused" if "\n" not in msg and "internal error" not in msg else "finding",
                   "why": f"{type(e).__name__}: {msg[:300]}"}
        except BaseException as e:  # noqa: BLE001 - every other exception is the finding
            out = {"verdict": "finding", "why": f"{type(e).__name__}: {str(e)[:300]}"}
        with os.fdopen(w, "wb") as f:
            pickle.dump(out, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if data:
        return pickle.loads(data)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return {"verdict": "finding", "why": "timeout > 60 s" if sig == signal.SIGALRM else f"killed by signal {sig}"}
    return {"verdict": "finding", "why": f"exited {os.WEXITSTATUS(status)} without a result"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    cases, counts, t0 = [], {}, time.monotonic()
    for name, fn, base in APIS:
        if a.only and name not in a.only.split(","):
            continue
        base_out = call(fn, base)
        if base_out["verdict"] != "ok":
            print(f"BASE {name} fails: {base_out}")
        for key in base:
            for v in VALUES:
                shown = repr(v) if not (isinstance(v, str) and len(v) > 50) else f"<{len(v)} chars>"
                o = call(fn, {**base, key: v})
                if o["verdict"] == "ok" and shown in MEANINGLESS:
                    o["verdict"], o["why"] = "accepted", "returned on a meaningless value"
                counts[o["verdict"]] = counts.get(o["verdict"], 0) + 1
                cases.append({"api": name, "arg": key, "value": shown, **o})
                if o["verdict"] in ("finding", "accepted"):
                    print(f"{o['verdict']:8} {name} {key}={shown}: {o['why']}", flush=True)
    print(f"{len(cases)} calls in {time.monotonic() - t0:.0f} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if a.out:
        with open(a.out, "w") as f:
            for c in cases:
                f.write(json.dumps(c) + "\n")
    return 1 if counts.get("finding") else 0


if __name__ == "__main__":
    sys.exit(main())
