"""`trnsim ops`: the one generated list of supported ops. docs/ops.md must be its Markdown
output (regenerate with `./build/src/trnsim ops --markdown > docs/ops.md`), and the JSON list
must be the Python API's trnsim.supported_ops()."""
import json
import subprocess
from pathlib import Path

import trnsim
from cli_path import trnsim_cli

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args):
    return subprocess.run([trnsim_cli(), "ops", *args], check=True, capture_output=True, text=True).stdout


def test_docs_ops_md_is_the_generated_list():
    doc = (ROOT / "docs" / "ops.md").read_text()
    assert doc == _cli("--markdown"), "docs/ops.md is stale: run ./build/src/trnsim ops --markdown > docs/ops.md"


def test_json_list_equals_supported_ops_and_names_how_each_runs():
    ops = json.loads(_cli("--json"))
    assert sorted(o["op"] for o in ops) == sorted(trnsim.supported_ops())
    by_name = {o["op"]: o for o in ops}
    assert by_name["MatMul"]["runs_as"] == "kernel"
    assert by_name["Gemm"]["runs_as"] == "decomposed"
    assert by_name["Reshape"]["runs_as"] == "alias (no kernel)"
    assert by_name["Shape"]["runs_as"] == "host (constant inputs)"
    assert "FusedAttention" not in by_name  # internal to the compiler


def test_table_counts_the_ops():
    text = _cli()
    assert text.rstrip().endswith(f"{len(trnsim.supported_ops())} ops")
