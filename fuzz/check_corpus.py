"""Replays the regression corpus (fuzz/regressions/) through every CLI command and Python API
that reads such a file, as a user would meet it (docs/hardening.md): each ends in a result
(exit 0) or in exit status 2 with one line `trnsim: error: ...` (Python: a TrnsimError, or
SweepSpecError for sweep files), never another status, a traceback, a signal or a hang (60 s).
One line per (input, entry point); the last line counts them.

    PYTHONPATH=python .venv/bin/python fuzz/check_corpus.py"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
import numpy as np  # noqa: E402
import trnsim  # noqa: E402

CLI = str(ROOT / "build/src/trnsim")
REG = ROOT / "fuzz/regressions"
RELU = None
SERVE = ["serve", "--model", "llama-3.1-8b", "--system", "trn2.48xlarge", "--tp", "8", "--requests", "20"]
results = []


def record(what: str, ok: bool, detail: str) -> None:
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}  {what}: {detail}", flush=True)


def cli(what: str, *args: str) -> None:
    env = dict(os.environ, TRNSIM_MAX_MEMORY=os.environ.get("TRNSIM_MAX_MEMORY", "2G"))
    try:
        p = subprocess.run([CLI, *args], capture_output=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        return record(what, False, "TIMEOUT (60 s)")
    err = p.stderr.decode("utf-8", "replace")
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("warning:") and "warning" not in x[:20]]
    if p.returncode == 0:
        return record(what, True, "exit 0 (a result)")
    ok = p.returncode == 2 and len(lines) == 1 and lines[0].startswith("trnsim: error: ")
    record(what, ok, f"exit {p.returncode}: {(lines[-1] if lines else '')[:160]}")


def py(what: str, f) -> None:
    try:
        f()
        record(what, True, "a result")
    except trnsim.TrnsimError as e:
        record(what, "\n" not in str(e), f"{type(e).__name__}: {str(e)[:160]}")
    except Exception as e:  # noqa: BLE001 - any other exception is the failure being looked for
        record(what, False, f"raised {type(e).__name__}: {str(e)[:160]}")


def zeros_for(data: bytes) -> dict:
    import onnx
    try:
        m = onnx.load_from_string(data)
    except Exception:  # noqa: BLE001 - compile_onnx reports the parse failure itself
        return {}
    feeds = {}
    for i in m.graph.input:
        t = i.type.tensor_type
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
        if np.prod(dims, dtype=np.float64) > 1 << 20:
            return {}
        feeds[i.name] = np.zeros(dims, np.int64 if t.elem_type == onnx.TensorProto.INT64 else np.float32)
    return feeds


def relu(tmp: Path) -> Path:
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    p = tmp / "relu.onnx"
    p.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    return p


def main() -> None:
    import tempfile
    tmp = Path(tempfile.mkdtemp())
    model = relu(tmp)
    onnx = [p for d in ("onnx", "onnx_run") for p in (REG / d).iterdir() if not p.name.startswith(".")]
    for f in sorted(onnx):
        name = f"{f.parent.name}/{f.name}"
        cli(f"{name} run", "run", str(f))
        cli(f"{name} run --timing-only", "run", str(f), "--timing-only")
        cli(f"{name} compile", "compile", str(f), "-o", str(tmp / "out.tpg"))
        cli(f"{name} convert", "convert", str(f), "--quantize", "int8", "-o", str(tmp / "out2.tpg"))
        data = f.read_bytes()
        py(f"{name} compile_onnx().run", lambda: trnsim.compile_onnx(data).run(zeros_for(data)))
    for f in sorted(p for p in (REG / "tpg").iterdir() if not p.name.startswith(".")):
        cli(f"tpg/{f.name} run", "run", str(f))
        cli(f"tpg/{f.name} run --timing-only", "run", str(f), "--timing-only")
        py(f"tpg/{f.name} load_compiled().run", lambda: trnsim.load_compiled(f).run({}))
    for f in sorted(p for p in (REG / "yaml").iterdir() if not p.name.startswith(".")):
        cli(f"yaml/{f.name} specs --chip", "specs", "--chip", str(f))
        cli(f"yaml/{f.name} specs --system", "specs", "--system", str(f))
        cli(f"yaml/{f.name} run --chip", "run", str(model), "--chip", str(f))
        cli(f"yaml/{f.name} collective --system", "collective", "--op", "all-reduce", "--system", str(f), "--sizes", "1M")
        cli(f"yaml/{f.name} llm --system", "llm", "--model", "llama-3.1-8b", "--system", str(f), "--tp", "4")
        cli(f"yaml/{f.name} kernel --chip", "kernel", "matmul", "--chip", str(f))
        py(f"yaml/{f.name} compile_onnx(chip=)", lambda: trnsim.compile_onnx(str(model), chip=str(f)).run({"x": np.zeros((2, 3), np.float32)}))
    for f in sorted(p for p in (REG / "npz").iterdir() if not p.name.startswith(".")):
        cli(f"npz/{f.name} run --inputs", "run", str(model), "--inputs", str(f))
        cli(f"npz/{f.name} compile --inputs", "compile", str(model), "--inputs", str(f), "-o", str(tmp / "o.tpg"))
    for f in sorted(p for p in (REG / "serve").iterdir() if not p.name.startswith(".")):
        if f.suffix == ".csv":
            cli(f"serve/{f.name} serve --trace", *SERVE, "--trace", str(f))
        else:
            opts = json.loads(f.read_text())
            args = [x for k, v in opts.items() for x in (f"--{k.replace('_', '-')}", str(v)) if not isinstance(v, bool)]
            cli(f"serve/{f.name} serve (options)", "serve", *args)
            py(f"serve/{f.name} trnsim.serve()", lambda: trnsim.serve(**{**opts, "requests": 20}))
    from trnsim.sweeps import SweepSpecError, parse_spec
    for f in sorted(p for p in (REG / "sweep").iterdir() if not p.name.startswith(".")):
        cli(f"sweep/{f.name} sweep", "sweep", str(f), "-o", str(tmp / "s.parquet"))
        try:
            parse_spec(f)
            record(f"sweep/{f.name} parse_spec", False, "accepted")
        except SweepSpecError as e:
            record(f"sweep/{f.name} parse_spec", "\n" not in str(e), f"SweepSpecError: {str(e)[:160]}")
        except Exception as e:  # noqa: BLE001
            record(f"sweep/{f.name} parse_spec", False, f"raised {type(e).__name__}: {str(e)[:160]}")
    print(f"\n{sum(results)}/{len(results)} pass")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
