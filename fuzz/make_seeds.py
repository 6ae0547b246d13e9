"""Seed corpora for `make fuzz` (docs/hardening.md), written to OUT/<target>/:
onnx: every ONNX backend node-test model shipped with the onnx wheel (the same cases as
      tests/python/onnx_node_suite.py); tpg: a few of them compiled to saved programs with
      the trnsim CLI; yaml: the chip and system presets; npz: small np.savez and
      np.savez_compressed archives of every dtype the reader takes.
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


def main() -> None:
    out = Path(sys.argv[1])
    cases = onnx_seeds(out)
    tpg_seeds(out, cases)
    yaml_seeds(out)
    npz_seeds(out)
    for t in ("onnx", "tpg", "yaml", "npz"):
        print(f"make_seeds: {len(list((out / t).glob('*')))} {t} seeds in {out / t}")


if __name__ == "__main__":
    main()
