"""Models through trnsim with a chosen chip / dtype / cores against onnxruntime (graph
optimisations off: its own GELU fusion rejects one generated model) on fuzz/differential.py's
seeded inputs; one subprocess per model (60 s limit). An output is wrong when NaN / inf
positions differ or max |trnsim - ort| > RELTOL * max |ort| over the finite values.

    PYTHONPATH=python .venv/bin/python fuzz/pattern_pairs/run_config.py CHIP DTYPE CORES RELTOL DIR_OR_FILE...
    e.g. trn1 fp32 1 1e-3 (one core: SBUF residency on), trn2 bf16 0 0.08
"""
import sys, os, subprocess, pickle, collections
from pathlib import Path
if sys.argv[1] == "--one":
    _, _, chip, dtype, cores, rel, path = sys.argv
    import warnings; warnings.simplefilter("ignore")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import numpy as np, onnx, onnxruntime as ort, trnsim
    from differential import random_inputs
    data = Path(path).read_bytes(); m = onnx.load_from_string(data); inp = random_inputs(m)
    so = ort.SessionOptions(); so.log_severity_level = 4
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        s = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        with np.errstate(all="ignore"):
            exp = dict(zip([o.name for o in s.get_outputs()], s.run(None, inp)))
    except Exception as e:
        print("SKIPPED", str(e)[:100]); sys.exit(0)
    try:
        got = trnsim.compile_onnx(data, chip=chip, dtype=dtype, cores=int(cores)).run(inp)
    except trnsim.TrnsimError as e:
        print("REFUSED", str(e)[:150]); sys.exit(0)
    bad = []
    for k, e in exp.items():
        g = np.asarray(got[k], np.float64); e = np.asarray(e, np.float64)
        if g.shape != e.shape: bad.append(f"{k}: shape {g.shape} vs {e.shape}"); continue
        if not np.array_equal(np.isnan(g), np.isnan(e)): bad.append(f"{k}: NaN positions differ"); continue
        fin = np.isfinite(e) & np.isfinite(g)
        if not np.array_equal(g[~fin], e[~fin], equal_nan=True): bad.append(f"{k}: inf differ"); continue
        if fin.any():
            d = np.abs(g[fin] - e[fin]).max(); sc = max(np.abs(e[fin]).max(), 1e-3)
            if d > float(rel) * sc: bad.append(f"{k}: max abs error {d:.4g} (scale {sc:.3g})")
    print("WRONG " + "; ".join(bad) if bad else "PASS"); sys.exit(0)
chip, dtype, cores, rel = sys.argv[1:5]
files = sorted(f for p in map(Path, sys.argv[5:]) for f in ([p] if p.is_file() else p.iterdir()) if f.suffix == ".onnx")
c = collections.Counter()
for f in files:
    try:
        r = subprocess.run([sys.executable, __file__, "--one", chip, dtype, cores, rel, str(f)], capture_output=True, text=True, timeout=60)
        line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else f"CRASH rc={r.returncode} {r.stderr.strip().splitlines()[-1:] }"
    except subprocess.TimeoutExpired:
        line = "TIMEOUT"
    c[line.split()[0]] += 1
    print(f"{f.name}: {line}", flush=True)
print(dict(c))
