"""Seed corpora for `make fuzz` (docs/hardening.md), written to OUT/<target>/:
onnx: every ONNX backend node-test model shipped with the onnx wheel (the same cases as
      tests/python/onnx_node_suite.py); tpg: a few of them compiled to saved programs with
      the trnsim CLI; yaml: the chip and system presets; npz: small np.savez and
      np.savez_compressed archives of every dtype the reader takes; serve: heads of the Azure
      traces and trnsim.serve option sets as JSON; sweep: sweep files (YAML).
Usage: python fuzz/make_seeds.py OUT"""
import hashlib
import io
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TPG_CASES = ("test_relu", "test_add", "test_matmul_2d", "test_softmax_axis_1", "test_layer_normalization_2d_axis0",
             "test_gather_0", "test_transpose_default", "test_sigmoid")


def write(out: Path, data: bytes) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)


def onnx_seeds(out: Path) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            from onnx.backend.test.case import node
            cases = {c.name: c for c in node.collect_testcases(None)}
    for c in cases.values():
        write(out / "onnx", c.model.SerializeToString())
    return cases


def tpg_seeds(out: Path, cases: dict) -> None:
    trnsim = ROOT / "build" / "src" / "trnsim"
    with tempfile.TemporaryDirectory() as tmp:
        for name in TPG_CASES:
            if name not in cases:
                continue
            model, tpg = Path(tmp) / f"{name}.onnx", Path(tmp) / f"{name}.tpg"
            model.write_bytes(cases[name].model.SerializeToString())
            r = subprocess.run([str(trnsim), "compile", str(model), "-o", str(tpg)], capture_output=True, text=True)
            if r.returncode == 0:
                write(out / "tpg", tpg.read_bytes())
            else:
                print(f"make_seeds: {name} does not compile: {r.stderr.strip()}", file=sys.stderr)


def yaml_seeds(out: Path) -> None:
    for f in sorted((ROOT / "configs").glob("*/*.yaml")):
        write(out / "yaml", f.read_bytes())


def npz_seeds(out: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {"x": rng.standard_normal((2, 3)).astype(np.float32), "ids": np.arange(4, dtype=np.int64),
              "h": np.ones(3, np.float16), "d": np.zeros((1, 2), np.float64), "b": np.array([True, False]),
              "i8": np.arange(-2, 2, dtype=np.int8), "u8": np.arange(3, dtype=np.uint8), "s": np.float32(1.5)}
    for save in (np.savez, np.savez_compressed):
        for subset in (arrays, {"x": arrays["x"]}, {}):
            buf = io.BytesIO()
            save(buf, **subset)
            write(out / "npz", buf.getvalue())


def serve_seeds(out: Path) -> None:
    """Heads of the Azure traces (both timestamp forms) and option sets of trnsim.serve."""
    import json
    for f in sorted((ROOT / "data" / "azure-llm-inference-2023").glob("*.csv")):
        lines = f.read_text().splitlines()[:40]
        write(out / "serve", ("\n".join(lines) + "\n").encode())
    write(out / "serve", b"ContextTokens,TIMESTAMP,GeneratedTokens,extra\n100,0.0,10,x\n200,0.5,20,y\n")
    for opts in ({"model": "llama-3.1-8b", "system": "trn2.48xlarge", "tp": 8, "rate": 1, "requests": 10},
                 {"model": "llama-3.1-70b", "system": "trn2.48xlarge", "tp": 32, "replicas": 2, "autoscale": "1:4",
                  "trace": "data/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv", "slo": "mlperf-interactive"},
                 {"model": "llama-3.1-8b", "system": "trn2.48xlarge", "offline": True, "max_seqs": 64, "input": 700,
                  "output": 16, "prefix_groups": 2, "prefix_tokens": 128, "dtype": "fp8", "weights": "int8"}):
        write(out / "serve", json.dumps(opts).encode())


def sweep_seeds(out: Path) -> None:
    """The sweep files of the examples and tests, and a random-search one."""
    for f in sorted(ROOT.glob("docs/examples/*sweep*.yaml")):
        write(out / "sweep", f.read_bytes())
    write(out / "sweep", b"command: collective\nsystem: trn2.48xlarge\naxes:\n  op: [all-reduce, all-gather]\n"
                         b"  sizes: [1M, 64M]\n")
    write(out / "sweep", b"command: llm\nsamples: 4\nseed: 1\nargs: [llama-3.1-8b]\naxes:\n"
                         b"  batch: {min: 1, max: 64, log: true}\n  tp: [4, 8]\nenv: {X: '{point_id}'}\n")


def main() -> None:
    out = Path(sys.argv[1])
    cases = onnx_seeds(out)
    tpg_seeds(out, cases)
    yaml_seeds(out)
    npz_seeds(out)
    serve_seeds(out)
    sweep_seeds(out)
    for t in ("onnx", "tpg", "yaml", "npz", "serve", "sweep"):
        print(f"make_seeds: {len(list((out / t).glob('*')))} {t} seeds in {out / t}")


if __name__ == "__main__":
    main()
