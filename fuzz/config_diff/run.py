"""Configuration-differential runs: every model through trnsim under a list of configurations,
each output compared with a reference (the node test's expected outputs when the model sits in
an onnx node-test folder with test_data_set_0, else onnxruntime with graph optimisations off on
fuzz/differential.py's seeded inputs) and, for fp32 configurations, with trnsim's own result
under the first configuration (the base, trn1 fp32 one core by default).

One worker subprocess per model runs all of its configurations (imports once); a crash or a
configuration past --timeout (60 s) is recorded for that configuration, and a fresh worker
goes on with the rest.

    PYTHONPATH=python .venv/bin/python fuzz/config_diff/run.py [--configs SPEC,...] [--sample N]
        [--timeout 60] [--out results.jsonl] DIR_OR_FILE...

A DIR_OR_FILE is an .onnx file, a folder of .onnx files, or a folder of onnx node tests
(folders holding model.onnx and test_data_set_0/).

Configuration SPEC: CHIP/DTYPE/cCORES[/lLNC][/FLAG...], FLAG one of
  t        timing-only compile and run (PASS when it runs wherever the base ran; no values)
  s        save the compiled program and run the loaded one: must equal the in-memory run
  o        overlap=False (a barrier between nodes)
  bN       symbolic dims = N (default 2) for the inputs (and compile_onnx(batch=N))
  tpN      tensor parallel over N chips (run_tensor_parallel; CHIP picks the system)
Default list: see DEFAULT below.

Statuses: PASS, WRONG (vs the reference or the base), REFUSED (a TrnsimError), CRASH,
TIMEOUT, SKIP (the reference cannot run). The last lines list every model whose statuses
differ between configurations (the configuration-dependent ones) and the counts.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import select
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

DEFAULT = ["trn1/fp32/c1", "trn1/fp32/c0", "inf2/fp32/c0", "trn2/fp32/c1/l1", "trn2/fp32/c0/l1",
           "trn2/fp32/c0/l2", "trn2/fp32/c2/l2", "trn3/fp32/c0", "trn2/fp32/c0/o", "trn2/fp32/c0/s",
           "trn2/fp32/c0/t", "trn1/fp32/c1/b3", "trn2/bf16/c0", "trn1/bf16/c1", "trn2/fp8/c0"]
SYMSTATES = ("PASS", "WRONG", "REFUSED", "CRASH", "TIMEOUT", "SKIP")
SYS = {"trn1": "trn1.32xlarge", "inf2": "inf2.48xlarge", "trn2": "trn2.48xlarge", "trn3": "trn3-ultraserver-gen1"}


def parse(spec: str) -> dict:
    p = spec.split("/")
    c = {"spec": spec, "chip": p[0], "dtype": p[1], "cores": 0, "lnc": 0, "timing": False, "save": False,
         "overlap": True, "batch": None, "tp": 0}
    for f in p[2:]:
        if f.startswith("tp"):
            c["tp"] = int(f[2:])
        elif f.startswith("c"):
            c["cores"] = int(f[1:])
        elif f.startswith("l"):
            c["lnc"] = int(f[1:])
        elif f.startswith("b"):
            c["batch"] = int(f[1:])
        elif f == "t":
            c["timing"] = True
        elif f == "s":
            c["save"] = True
        elif f == "o":
            c["overlap"] = False
        else:
            raise SystemExit(f"unknown flag {f!r} in {spec}")
    return c


def chip_arg(chip: str) -> str:
    """A preset name, or NAME.yaml in $CONFIG_DIFF_CHIPS (a chip YAML variant; --chip-dir)."""
    d = os.environ.get("CONFIG_DIFF_CHIPS")
    if chip not in SYS and d and (Path(d) / f"{chip}.yaml").exists():
        return str(Path(d) / f"{chip}.yaml")
    return chip


def rel_tol(dtype: str) -> float:
    return {"fp32": 1e-3, "bf16": 0.2, "fp8": 0.2}[dtype]


def compare(got: dict, exp: dict, rel: float, gross_only: bool) -> list[str]:
    """What differs between trnsim's outputs and the reference (empty: agree). An output is
    wrong on a shape difference, NaN positions that differ (gross_only: a NaN/inf where the
    reference is finite), or max |got - ref| > rel * max |ref| over the finite values (and
    > 1e-4 absolute, for near-zero outputs)."""
    import numpy as np
    bad = []
    for k, e in exp.items():
        if k not in got:
            bad.append(f"{k}: missing")
            continue
        e = np.asarray(e)
        if e.dtype.kind in "OSU":
            continue
        r = rel
        if e.dtype.name in ("bfloat16", "float16") or e.dtype.name.startswith("float8"):
            r = max(rel, 2e-2 if e.dtype.name != "float16" else 2e-3)  # the expected values are rounded to it
        g = np.asarray(got[k], np.float64)
        e = e.astype(np.float64)
        if g.shape != e.shape:
            bad.append(f"{k}: shape {list(g.shape)} vs {list(e.shape)}")
            continue
        if gross_only:
            nf = ~np.isfinite(g) & np.isfinite(e)
            if nf.any():
                i = tuple(int(x) for x in np.argwhere(nf)[0])
                bad.append(f"{k}: {int(nf.sum())}/{g.size} non-finite where ref finite, e.g. {i}: {g[i]} vs {e[i]:.4g}")
                continue
        else:
            if not np.array_equal(np.isnan(g), np.isnan(e)):
                n = int((np.isnan(g) != np.isnan(e)).sum())
                i = tuple(int(x) for x in np.argwhere(np.isnan(g) != np.isnan(e))[0])
                bad.append(f"{k}: NaN positions differ ({n}/{g.size}), e.g. {i}: {g[i]} vs {e[i]:.4g}")
                continue
            inf = np.isinf(g) | np.isinf(e)
            if not np.array_equal(g[inf], e[inf]):
                bad.append(f"{k}: inf differ")
                continue
        fin = np.isfinite(e) & np.isfinite(g)
        if fin.any():
            d = np.where(fin, np.abs(g - e), 0.0)
            sc = max(np.abs(e[fin]).max(), 1e-3)
            if d.max() > r * sc and d.max() > 1e-4:
                i = tuple(int(x) for x in np.unravel_index(np.argmax(d), d.shape))
                bad.append(f"{k}: max abs error {d.max():.4g} (scale {sc:.3g}) at {i}: {g[i]:.6g} vs {e[i]:.6g}")
    return bad


# ------------------------------------------------------------------------------------------
# worker: one model, configurations from argv; one JSON line per configuration on stdout

def load_case(path: Path, symdim: int):
    """(model bytes, inputs, expected outputs or None) for a model file or node-test folder."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    sys.path.insert(0, str(ROOT / "fuzz"))
    import differential
    if path.is_dir():
        data = (path / "model.onnx").read_bytes()
        m = onnx.load_from_string(data)
        ds = path / "test_data_set_0"
        inits = {i.name for i in m.graph.initializer}
        ins = [i.name for i in m.graph.input if i.name not in inits]
        inp, exp = {}, {}
        for j, n in enumerate(ins):
            f = ds / f"input_{j}.pb"
            if not f.exists():
                return data, None, None
            t = onnx.TensorProto()
            t.ParseFromString(f.read_bytes())
            inp[n] = numpy_helper.to_array(t)
        for j, o in enumerate(m.graph.output):
            f = ds / f"output_{j}.pb"
            if not f.exists():
                return data, None, None
            t = onnx.TensorProto()
            t.ParseFromString(f.read_bytes())
            exp[o.name] = numpy_helper.to_array(t)
        return data, inp, exp
    data = path.read_bytes()
    m = onnx.load_from_string(data)
    old = differential.SYMBOLIC_DIM
    differential.SYMBOLIC_DIM = symdim
    try:
        inp = differential.random_inputs(m)
    finally:
        differential.SYMBOLIC_DIM = old
    return data, inp, None


def has_free_axes(data: bytes) -> bool:
    import onnx
    m = onnx.load_from_string(data)
    return any(not d.HasField("dim_value") for i in m.graph.input for d in i.type.tensor_type.shape.dim)


def ort_run(data: bytes, inp: dict):
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
    with np.errstate(all="ignore"):
        return dict(zip([o.name for o in s.get_outputs()], s.run(None, inp)))


def worker(path: str, specs: list[str]) -> None:
    import warnings
    warnings.simplefilter("ignore")
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    import numpy as np
    import trnsim

    def say(spec, status, detail=""):
        out.write(json.dumps({"spec": spec, "status": status, "detail": detail[:400]}) + "\n")
        out.flush()

    cases, base = {}, None
    for spec in specs:
        c = parse(spec)
        out.write(json.dumps({"start": spec}) + "\n")
        out.flush()
        sd = c["batch"] or 2
        try:
            if sd not in cases:
                data, inp, exp = load_case(Path(path), sd)
                if inp is not None and exp is None:
                    try:
                        exp = ort_run(data, inp)
                    except Exception as e:  # noqa: BLE001
                        exp = f"onnxruntime: {str(e).splitlines()[0][:100] if str(e) else type(e).__name__}"
                cases[sd] = (data, inp, exp)
            data, inp, exp = cases[sd]
            if c["batch"] and not has_free_axes(data):
                say(spec, "SKIP", "no symbolic input axis")
                continue
            if inp is None:
                say(spec, "SKIP", "inputs out of reach")
                continue
            if isinstance(exp, str):
                say(spec, "SKIP", exp)
                continue
            if c["tp"]:
                got, _ = trnsim.run_tensor_parallel(data, system=SYS[c["chip"]], tp=c["tp"], dtype=c["dtype"],
                                                     inputs=inp, lnc=c["lnc"],
                                                     mode="timing" if c["timing"] else "functional")
                if c["timing"]:
                    say(spec, "PASS")
                    continue
            else:
                cm = trnsim.compile_onnx(data, chip=chip_arg(c["chip"]), dtype=c["dtype"], cores=c["cores"], lnc=c["lnc"],
                                         mode="timing" if c["timing"] else "functional", overlap=c["overlap"],
                                         batch=c["batch"])
                got = cm.run(inp)
                if c["timing"]:
                    # the timing-only run must report the time the functional run reports
                    t = cm.report.get("time_s")
                    fm = trnsim.compile_onnx(data, chip=chip_arg(c["chip"]), dtype=c["dtype"], cores=c["cores"], lnc=c["lnc"],
                                             overlap=c["overlap"], batch=c["batch"])
                    fm.run(inp)
                    tf = fm.report.get("time_s")
                    if t is None or not np.isfinite(t) or t < 0 or abs(t - tf) > 1e-6 * max(tf, 1e-9) + 1e-12:
                        say(spec, "WRONG", f"timing-only time_s {t} vs functional {tf}")
                    else:
                        say(spec, "PASS")
                    continue
                if c["save"]:
                    with tempfile.TemporaryDirectory() as td:
                        cm.save(os.path.join(td, "p.tpg"))
                        got2 = trnsim.load_compiled(os.path.join(td, "p.tpg")).run(inp)
                    diff = [k for k in got if k not in got2 or np.asarray(got[k]).shape != np.asarray(got2[k]).shape
                            or not np.array_equal(np.asarray(got[k]), np.asarray(got2[k]), equal_nan=True)]
                    if diff:
                        say(spec, "WRONG", f"save/load round trip differs in {diff}")
                        continue
            bad = compare(got, exp, rel_tol(c["dtype"]), c["dtype"] != "fp32")
            if not bad and c["dtype"] == "fp32" and base is not None and sd == 2 and not c["timing"]:
                bad = [f"vs base: {b}" for b in compare(got, base, 1e-3, False)]
            if base is None and not bad and sd == 2 and c["dtype"] == "fp32":
                base = got
            say(spec, "WRONG" if bad else "PASS", "; ".join(bad))
        except trnsim.TrnsimError as e:
            say(spec, "REFUSED", f"{type(e).__name__}: {e}")
        except Exception as e:  # noqa: BLE001 - anything else is a crash of the stack
            say(spec, "CRASH", f"{type(e).__name__}: {e}")


# ------------------------------------------------------------------------------------------

def run_model(path: str, specs: list[str], timeout: float) -> dict:
    res, todo = {}, list(specs)
    while todo:
        err = tempfile.TemporaryFile()
        p = subprocess.Popen(["nice", "-n", "10", sys.executable, __file__, "--worker", path, *todo],
                             stdout=subprocess.PIPE, stderr=err, text=True)
        cur = None
        while True:
            r, _, _ = select.select([p.stdout], [], [], timeout)
            if not r:
                p.kill()
                p.wait()
                if cur is None:
                    cur = todo[0]
                res[cur] = ("TIMEOUT", f"past {timeout:g} s")
                break
            line = p.stdout.readline()
            if not line:
                rc = p.wait()
                if cur is not None and cur not in res:
                    err.seek(0)
                    tail = err.read().decode(errors="replace").strip().splitlines()[-2:]
                    res[cur] = ("CRASH", f"exit {rc}: {tail}")
                elif cur is None:
                    err.seek(0)
                    res[todo[0]] = ("CRASH", f"worker exit {rc} before start: {err.read().decode(errors='replace')[-300:]}")
                break
            d = json.loads(line)
            if "start" in d:
                cur = d["start"]
            else:
                res[d["spec"]] = (d["status"], d["detail"])
        todo = [s for s in todo if s not in res]
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--configs", default=",".join(DEFAULT))
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--sample", type=int, default=0, help="a seeded random sample of this many models")
    ap.add_argument("--out", default="", help="append one JSON line per model here")
    ap.add_argument("--chip-dir", default="", help="a folder of chip YAML variants: CHIP may name one (NAME.yaml)")
    a = ap.parse_args()
    if a.chip_dir:
        os.environ["CONFIG_DIFF_CHIPS"] = str(Path(a.chip_dir).resolve())
    specs = a.configs.split(",")
    for s in specs:
        parse(s)
    models = []
    for p in map(Path, a.paths):
        if p.is_file():
            models.append(p)
        elif (p / "model.onnx").exists():
            models.append(p)
        else:
            for f in sorted(p.iterdir()):
                if f.suffix == ".onnx" or (f / "model.onnx").exists():
                    models.append(f)
    if a.sample and a.sample < len(models):
        models = sorted(random.Random(0).sample(models, a.sample))
    counts = collections.Counter()
    per_cfg = {s: collections.Counter() for s in specs}
    diverging = []
    fo = open(a.out, "a") if a.out else None
    for m in models:
        res = run_model(str(m), specs, a.timeout)
        # tp and bN configurations refuse models without a split / a free axis by design
        sts = {res[s][0] for s in specs if not (res[s][0] == "REFUSED" and ("/tp" in s or "/b" in s))} - {"SKIP"}
        for s in specs:
            counts[res[s][0]] += 1
            per_cfg[s][res[s][0]] += 1
            if res[s][0] not in ("PASS", "SKIP") and not (res[s][0] == "REFUSED" and ("/tp" in s or "/b" in s)):
                print(f"{res[s][0]:8s} {m.name} [{s}]: {res[s][1][:300]}", flush=True)
        if len(sts) > 1:
            diverging.append(m.name)
        if fo:
            fo.write(json.dumps({"model": str(m), "results": res}) + "\n")
            fo.flush()
    print("\nper configuration:")
    for s in specs:
        print(f"  {s:22s} " + ", ".join(f"{k} {per_cfg[s][k]}" for k in SYMSTATES if per_cfg[s][k]))
    print(f"configuration-dependent models ({len(diverging)}): {' '.join(diverging)}")
    print(f"config_diff: {len(models)} models x {len(specs)} configurations = {len(models) * len(specs)}: "
          + ", ".join(f"{k} {counts[k]}" for k in SYMSTATES if counts[k]))
    return 1 if counts["WRONG"] or counts["CRASH"] or counts["TIMEOUT"] else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(main())
