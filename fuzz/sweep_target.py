"""Fuzz target for sweep files (atheris, coverage-guided; docs/hardening.md): the bytes as a sweep
file through parse_spec, then what run_sweep does before it launches anything: every point's
options, id and command line. Any exception but SweepSpecError, or a run past the timeout, is a
finding. spec.py and point.py are loaded alone (pure Python: no trnsim._core needed).

    python fuzz/sweep_target.py [libFuzzer flags] CORPUS_DIR... | FILE...
"""
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

SWEEPS = Path(__file__).resolve().parent.parent / "python" / "trnsim" / "sweeps"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"sweep_{name}", SWEEPS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def make_target():
    spec, point = _load("spec"), _load("point")
    fd, path = tempfile.mkstemp(suffix=".yaml")
    os.close(fd)

    def one(data: bytes) -> None:
        Path(path).write_bytes(data)
        try:
            sw = spec.parse_spec(path)
        except spec.SweepSpecError:
            return
        for p in sw.points():
            spec.point_id(sw.command, sw.args, p)
            point.command_line("trnsim", sw.command, sw.args, p)

    return one


def main() -> None:
    import atheris
    with atheris.instrument_imports():
        import yaml  # noqa: F401  (its parser's branches are coverage too)
        one = make_target()
    atheris.Setup(sys.argv, one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
