"""`trnsim specs` and trnsim.specs(): every preset listed, the published numbers of
../shared/reference/HARDWARE.md, users' own files, and one-line errors for malformed ones.

The CLI is found through $TRNSIM_BIN, else build/src/trnsim, else `trnsim` on PATH.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import trnsim
from trnsim.hw import chip_presets, preset_yaml, system_presets
from cli_path import trnsim_cli

ROOT = Path(__file__).resolve().parents[2]
GiB = 1024**3

# HARDWARE.md, "Chips" and "Systems".
CHIPS = {"trn1", "inf2", "trn2", "trn3"}
SYSTEMS = {"trn1.2xlarge", "trn1.32xlarge", "inf2.48xlarge", "trn2.48xlarge", "trn2-ultraserver",
           "trn3-ultraserver-gen1", "trn3-ultraserver-gen2", "trn3-ultraserver-gen2-tiered"}
HBM = {  # capacity in bytes, bandwidth in GB/s (10^9 B/s)
    "trn1": (32 * GiB, 820 * GiB / 1e9),
    "inf2": (32 * GiB, 820 * GiB / 1e9),
    "trn2": (96 * GiB, 2900.0),
    "trn3": (144 * GiB, 4900.0),
}




def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([trnsim_cli(), "specs", *args], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def cli_json() -> dict:
    r = run("--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def by_name(items: list[dict]) -> dict[str, dict]:
    return {x["name"]: x for x in items}


def test_every_preset_is_listed(cli_json):
    assert set(by_name(cli_json["chips"])) == CHIPS == set(chip_presets())
    assert set(by_name(cli_json["systems"])) == SYSTEMS == set(system_presets())


def test_dense_bf16_within_5_percent_of_published(cli_json):
    chips = by_name(cli_json["chips"])
    assert chips["trn2"]["dense_tflops"]["bf16"] == pytest.approx(667, rel=0.05)
    assert chips["trn1"]["dense_tflops"]["bf16"] == pytest.approx(190, rel=0.05)
    assert chips["trn3"]["dense_tflops"]["bf16"] == pytest.approx(671, rel=0.05)
    # The clock math: 128 x 128 x 2 x 2.8 GHz x 2 cores for Trainium1.
    assert chips["trn1"]["clock_derived_tflops"]["bf16"] == pytest.approx(128 * 128 * 2 * 2.8e9 * 2 / 1e12)


def test_hbm_equals_hardware_reference(cli_json):
    for name, chip in by_name(cli_json["chips"]).items():
        capacity, bandwidth = HBM[name]
        assert chip["hbm_capacity_bytes"] == capacity, name
        assert chip["hbm_bandwidth_gbps"] == pytest.approx(bandwidth, rel=1e-12), name
        assert chip["roofline_knee_flop_per_byte"]["bf16"] == pytest.approx(
            chip["dense_tflops"]["bf16"] * 1e12 / (chip["hbm_bandwidth_gbps"] * 1e9))


def test_table_lists_every_preset():
    r = run()
    assert r.returncode == 0, r.stderr
    for name in CHIPS | SYSTEMS:
        assert name in r.stdout


def test_python_specs_equal_cli_json(cli_json):
    assert trnsim.specs() == cli_json


def _user_chip(tmp_path: Path, old: str, new: str, name: str = "mine.yaml") -> Path:
    """A copy of the trn2 preset (as `--show` prints it) with one line changed."""
    text = run("--show", "trn2").stdout
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


def test_user_file_works_like_a_preset(tmp_path):
    path = _user_chip(tmp_path, "capacity: 96 GiB", "capacity: 192 GiB")
    r = run("--json", "--chip", str(path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [c["hbm_capacity_bytes"] for c in doc["chips"]] == [192 * GiB]
    assert doc["systems"] == []
    assert doc["chips"][0]["dense_tflops"] == trnsim.load_chip("trn2")["dense_tflops"]
    assert trnsim.specs(chips=[str(path)]) == doc
    assert trnsim.load_chip(path)["hbm_capacity_bytes"] == 192 * GiB  # a PathLike is a path


def test_user_system_names_a_chip_next_to_it(tmp_path):
    _user_chip(tmp_path, "name: trn2", "name: my-trn2", "chip.yaml")
    system = run("--show", "trn2.48xlarge").stdout.replace("chip: trn2", "chip: chip.yaml", 1)
    (tmp_path / "system.yaml").write_text(system)
    r = run("--json", "--system", str(tmp_path / "system.yaml"))
    assert r.returncode == 0, r.stderr
    (s,) = json.loads(r.stdout)["systems"]
    assert s["chip"]["name"] == "my-trn2" and s["chips"] == 16


def test_examples_load():
    doc = trnsim.specs(chips=[str(ROOT / "configs/examples/trn4-whatif.yaml")],
                       systems=[str(ROOT / "configs/examples/trn4-whatif-ultraserver.yaml")])
    (chip,) = doc["chips"]
    assert chip["hbm_capacity_bytes"] == 2 * HBM["trn3"][0]
    assert chip["dense_tflops"]["mxfp4"] == pytest.approx(128 * 128 * 2 * 2.4e9 * 8 * 8 / 1e12)


MALFORMED = [
    # (change to the trn2 preset, field named in the error, words of the expectation)
    (("  semaphore_latency: 100 ns", "  # semaphore_latency: 100 ns"), "core.semaphore_latency", "missing (expected"),
    (("capacity: 96 GiB", "capacity: 96 GB/s"), "hbm.capacity", "expected a positive capacity"),
    (("bandwidth: 2.9 TB/s", "bandwidth: -2.9 TB/s"), "hbm.bandwidth", "expected a positive bandwidth"),
    (("    clock: 2.4 GHz", "    clok: 2.4 GHz"), "core.tensor.clok", "unknown key"),
    (("neuron_cores: 8", "neuron_cores: eight"), "neuron_cores", "expected a positive integer"),
]


@pytest.mark.parametrize("change,field,expected", MALFORMED, ids=[m[1] for m in MALFORMED])
def test_malformed_file_gives_one_line_naming_the_field(tmp_path, change, field, expected):
    path = _user_chip(tmp_path, *change)
    r = run("--chip", str(path))
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"trnsim: error: {path}")
    assert f" {field}: " in lines[0] and expected in lines[0]
    with pytest.raises(trnsim.ConfigError) as err:
        trnsim.load_chip(str(path))
    assert lines[0] == f"trnsim: error: {err.value}"


def test_unknown_preset_and_missing_file():
    r = run("--chip", "trn9")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    assert "trn9" in r.stderr and "trn2" in r.stderr
    with pytest.raises(trnsim.ConfigError, match="cannot read"):
        trnsim.load_system("/nonexistent/system.yaml")


def test_show_prints_the_preset_yaml():
    r = run("--show", "trn2")
    assert r.returncode == 0
    assert r.stdout == preset_yaml("trn2")
    assert "name: trn2\n" in r.stdout and "# " in r.stdout  # comments (sources) included
