"""The tiered Trn3 Gen2 preset (trn3-ultraserver-gen2-tiered, topology kind tiered_switch) through
the CLI: listed by `trnsim specs` with the per-tier figures of HARDWARE.md, all-reduce from 1 MiB
to 1 GiB never faster than the flat preset nor than the cross-rack cut allows, a ring all-gather's
network time equal to the closed form (bottleneck: the cross-rack tier), and clear errors for bad
tier configs.

The CLI is found through $TRNSIM_BIN, else build/src/trnsim, else `trnsim` on PATH.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_path import trnsim_cli

TIERED = "trn3-ultraserver-gen2-tiered"
FLAT = "trn3-ultraserver-gen2"
# HARDWARE.md, "Fabric details": PCIe Gen6 x8 links per chip, per direction, GB/s.
TIERS = [("server", 256.0), ("rack", 320.0), ("cross-rack", 128.0)]
CHIPS, CHIPS_PER_SERVER, SERVERS_PER_RACK = 144, 4, 18


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([trnsim_cli(), *args], capture_output=True, text=True, timeout=120)


def collective_json(*args: str) -> list[dict]:
    p = cli("collective", *args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_specs_lists_the_tiered_preset_with_its_tiers():
    table = cli("specs")
    assert table.returncode == 0, table.stderr
    line = next(l for l in table.stdout.splitlines() if l.startswith(TIERED))
    assert "tiered_switch" in line and " 144 " in line
    p = cli("specs", "--json")
    assert p.returncode == 0, p.stderr
    systems = {s["name"]: s for s in json.loads(p.stdout)["systems"]}
    topo = systems[TIERED]["topology"]
    assert topo["kind"] == "tiered_switch"
    assert (topo["chips_per_server"], topo["servers_per_rack"]) == (CHIPS_PER_SERVER, SERVERS_PER_RACK)
    assert [(t["name"], t["bandwidth_per_chip_gbps"]) for t in topo["tiers"]] == TIERS
    assert topo["bandwidth_per_chip_gbps"] == pytest.approx(sum(bw for _, bw in TIERS))
    assert systems[FLAT]["topology"]["kind"] == "switch"  # the flat preset stays the default reading


def test_all_reduce_1m_to_1g_is_bounded_by_flat_and_by_the_rack_cut():
    # One rank per chip: with the default 8 (1,152 ranks) the automatic choice times a direct
    # exchange of 1.3M flows per size (~10 s each); the tiers are per chip either way.
    sweep = ("--op", "all-reduce", "--sizes", "1M:1G", "--ranks-per-chip", "1")
    tiered = collective_json(*sweep, "--system", TIERED)
    flat = collective_json(*sweep, "--system", FLAT)
    sizes = [1 << k for k in range(20, 31)]
    assert [r["size_bytes"] for r in tiered] == sizes == [r["size_bytes"] for r in flat]
    n = tiered[0]["ranks"]
    assert n == CHIPS
    cut_gbps = CHIPS // 2 * TIERS[2][1]  # one rack's cross-rack uplinks, one direction
    for t, f in zip(tiered, flat):
        S = t["size_bytes"]
        assert t["busbw_gbps"] == pytest.approx(S / t["time_s"] / 1e9 * 2 * (n - 1) / n, rel=1e-9)
        # Every tier is slower than the flat per-chip figure: never faster than flat (same fixed costs).
        assert t["time_s"] >= f["time_s"] * (1 - 1e-12), S
        # Each rack must receive the other rack's partial sums, S bytes, over the cut.
        assert t["time_s"] >= S / (cut_gbps * 1e9), S
    # At 1 GiB the data phase shows: the tiered system is measurably slower.
    assert tiered[-1]["time_s"] > 1.05 * flat[-1]["time_s"]
    # The automatic choice there is the direct algorithm (reduce-scatter then all-gather, one step
    # each): every chip sends S/144 to each of the 72 chips of the other rack in both steps through
    # its 128 GB/s cross-rack uplink, the last flows to finish: network time 2 x (72 S/144 / 128
    # + 2 x 1,000 ns). Tolerance 1e-3: the receiver's last-chunk reduction (~1 us) is on top.
    big = tiered[-1]
    assert big["algorithm"] == "direct"
    S = big["size_bytes"]
    want = 2 * (72 * S / CHIPS / (TIERS[2][1] * 1e9) + 2 * 1000e-9)
    assert big["time_s"] - big["fixed_s"] == pytest.approx(want, rel=1e-3)


@pytest.mark.parametrize("size", [CHIPS * 4 * 1024, CHIPS * 4 * (1 << 20)])
def test_ring_all_gather_network_time_is_the_cross_rack_closed_form(size):
    # One rank per chip; each of the 143 steps sends size/144 to the ring successor, and the two
    # transfers crossing racks (the ring crosses twice) run at 128 GB/s, plus 2 x 1,000 ns (up,
    # down). time_s - fixed_s is the network part.
    (r,) = collective_json("--op", "all-gather", "--system", TIERED, "--ranks-per-chip", "1",
                           "--algorithm", "ring", "--sizes", str(size))
    assert r["steps"] == CHIPS - 1
    want = (CHIPS - 1) * (size / CHIPS / (TIERS[2][1] * 1e9) + 2 * 1000e-9)
    assert r["time_s"] - r["fixed_s"] == pytest.approx(want, rel=1e-6)


def test_bad_tier_config_names_key_and_line(tmp_path: Path):
    text = cli("specs", "--show", TIERED)
    assert text.returncode == 0, text.stderr
    yaml = text.stdout.replace("name: rack,", "name: rak,", 1)
    assert yaml != text.stdout
    path = tmp_path / "mine.yaml"
    path.write_text(yaml)
    p = cli("collective", "--op", "all-reduce", "--system", str(path), "--sizes", "1M")
    assert p.returncode != 0
    line = next(i + 1 for i, l in enumerate(yaml.splitlines()) if "name: rak," in l)
    assert f"mine.yaml:{line}: topology.tiers[1].name: expected 'rack'" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
