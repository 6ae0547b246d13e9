"""Where the tests find the `trnsim` command: $TRNSIM_BIN, else the make build
(build/src/trnsim), else `trnsim` on PATH. Outside CI a missing binary skips the CLI tests;
in CI (CI=true) it fails them, so a broken build can never pass as skipped tests."""
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def trnsim_cli() -> str:
    for cand in (os.environ.get("TRNSIM_BIN"), str(ROOT / "build" / "src" / "trnsim"),
                 shutil.which("trnsim")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    message = "no trnsim binary: set TRNSIM_BIN or build first (make build)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)
