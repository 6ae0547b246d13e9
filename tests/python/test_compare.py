"""`trnsim compare` (docs/power-and-cost.md): each figure against an independent recomputation —
ratios from the per-system figures, $ per million from the printed assumptions, the fleet against
`trnsim serve` runs at N and N-1 replicas, energy from the serve result and the host power."""
import json
import re
import subprocess

import pytest

from cli_path import trnsim_cli
import trnsim

# A workload where trn2 (tp 4 NeuronCores = one chip) needs more than one replica (rate 40: at
# 20 one replica met the SLO once decode attention streamed the batch's KV caches in parallel).
WORKLOAD = ["--model", "llama-3.1-8b", "--systems", "trn2.48xlarge,p5.48xlarge", "--tp", "trn2.48xlarge=4,p5.48xlarge=1",
            "--rate", "40", "--requests", "600", "--input", "512", "--output", "128"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([trnsim_cli(), "compare", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def result() -> dict:
    p = cli(*WORKLOAD, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_kind_time_and_ratios(result):
    assert result["kind"] == "compare"
    rows = result["systems"]
    assert [r["system"] for r in rows] == ["trn2.48xlarge", "p5.48xlarge"]
    assert result["time_s"] == pytest.approx(sum(r["time_s"] for r in rows), rel=1e-12)
    first = rows[0]
    for row in rows:
        for key, ratio in row["ratio_to_first"].items():
            assert ratio == pytest.approx(row[key] / first[key], rel=1e-12), key
    assert rows[0]["ratio_to_first"]["chips"] == 1.0


def test_usd_per_million_from_the_printed_assumptions():
    # Redo every $ figure from the table's text alone, as a reader would.
    p = cli(*WORKLOAD)
    assert p.returncode == 0, p.stderr
    text = p.stdout
    printed = {}
    for kind in ("on-demand", "reserved"):
        m = re.search(rf"USD per million output tokens, {kind}\s+(\S+)\s+(\S+)", text)
        printed[kind] = [float(m.group(1)), float(m.group(2))]
    facts = re.findall(r"  (\S+): (\d+) chips x ([\d.]+) s = \S+ chip-hours, (\d+) output tokens, (\d+) chips per instance", text)
    prices = re.findall(r"on-demand ([\d.]+) USD/h: .*\n    reserved  ([\d.]+) USD/h", text)
    assert len(facts) == 2 and len(prices) == 2
    for i, ((_, chips, time_s, tokens, per_instance), (od, rs)) in enumerate(zip(facts, prices)):
        for kind, price in (("on-demand", od), ("reserved", rs)):
            by_hand = float(price) / int(per_instance) * int(chips) * float(time_s) / 3600 / (int(tokens) / 1e6)
            assert printed[kind][i] == pytest.approx(by_hand, rel=2e-3), (i, kind)


def test_fleet_is_the_smallest_meeting_the_slo(result):
    # Independent runs of `trnsim serve` at the chosen replica count and one fewer.
    for row in result["systems"]:
        n = row["replicas"]
        opts = dict(rate=40, requests=600, input="512", output="128", slo="mlperf-server")
        at_n = trnsim.serve("llama-3.1-8b", row["system"], row["tp"], replicas=n, **opts)
        assert at_n["slo_attainment"] >= 0.99
        assert at_n["output_tokens"] == row["output_tokens"] and at_n["time_s"] == row["time_s"]
        if n > 1:
            assert trnsim.serve("llama-3.1-8b", row["system"], row["tp"], replicas=n - 1, **opts)["slo_attainment"] < 0.99
        price = row["price"]["on_demand_usd_per_instance_hour"]
        usd = price / row["chips_per_instance"] * at_n["chips"] * at_n["time_s"] / 3600
        assert row["usd_per_million_output_tokens_on_demand"] == pytest.approx(usd / (at_n["output_tokens"] / 1e6), rel=1e-12)
        facility = (at_n["energy_j"] + row["host_power_per_instance_w"] * at_n["chips"] / row["chips_per_instance"]
                    * at_n["time_s"]) * 1.15
        assert row["j_per_output_token_facility"] == pytest.approx(facility / at_n["output_tokens"], rel=1e-12)
        assert row["output_tokens_per_s_per_mw_facility"] == pytest.approx(1e6 / row["j_per_output_token_facility"], rel=1e-12)
    assert result["systems"][0]["replicas"] > 1  # the search did work


def test_prices_say_where_they_come_from(result):
    trn2, p5 = result["systems"]
    assert trn2["price"]["on_demand_is_estimate"] and "ESTIMATE" in trn2["price"]["on_demand_source"]
    # The estimate's stated arithmetic: a third of p5.48xlarge's per-GPU hour, times 16 chips.
    assert trn2["price"]["on_demand_usd_per_instance_hour"] == pytest.approx(55.04 / 8 / 3 * 16, rel=1e-12)
    assert not p5["price"]["on_demand_is_estimate"] and p5["price"]["on_demand_usd_per_instance_hour"] == 55.04
    assert p5["price"]["reserved_usd_per_instance_hour"] == 33.0
    j = trnsim.compare("llama-3.1-8b", ["trn2.48xlarge"], tp=4, price_estimate={"trn2.48xlarge": 40.0}, rate=5, requests=50)
    price = j["systems"][0]["price"]
    assert price["on_demand_usd_per_instance_hour"] == 40.0 and "--price-estimate" in price["on_demand_source"]


def test_same_seed_same_output_and_python_equals_cli(result):
    again = json.loads(cli(*WORKLOAD, "--json").stdout)
    assert again == result
    py = trnsim.compare("llama-3.1-8b", "trn2.48xlarge,p5.48xlarge", tp={"trn2.48xlarge": 4, "p5.48xlarge": 1},
                        rate=40, requests=600, input="512", output="128")
    assert py == result
    # The same requests on every system; another seed draws others.
    assert result["systems"][0]["output_tokens"] == result["systems"][1]["output_tokens"]
    seed1 = trnsim.compare("llama-3.1-8b", ["p5.48xlarge"], rate=20, requests=600, input="100:900", output="128", seed=1)
    seed2 = trnsim.compare("llama-3.1-8b", ["p5.48xlarge"], rate=20, requests=600, input="100:900", output="128", seed=2)
    assert seed1["systems"][0]["p99_ttft_s"] != seed2["systems"][0]["p99_ttft_s"]


@pytest.mark.parametrize("args, words", [
    (["--systems", "trn2.48xlarge,h999"], "no system named 'h999'"),
    (["--systems", "p5.48xlarge", "--tp", "trn2.48xlarge=4"], "not one of --systems"),
    (["--systems", "p5.48xlarge", "--price", "spot"], "--price 'spot'"),
    (["--systems", "p5.48xlarge", "--price-estimate", "p5.48xlarge"], "SYSTEM=NUMBER"),
])
def test_bad_input_is_one_line_exit_2(args, words):
    p = cli("--model", "llama-3.1-8b", "--rate", "5", "--requests", "20", *args)
    assert p.returncode == 2
    assert p.stderr.startswith("trnsim: error:") and words in p.stderr and p.stderr.count("\n") == 1
    with pytest.raises(trnsim.ConfigError):
        trnsim.compare("llama-3.1-8b", ["nope"], rate=5, requests=20)


def test_offline_is_a_fixed_fleet_throughput_run():
    # Offline queues every request at time 0: no load to size for, so --replicas (default 1).
    j = trnsim.compare("llama-3.1-8b", ["p5.48xlarge", "p5en.48xlarge"], offline=True, requests=200)
    for row in j["systems"]:
        assert row["fleet_sizing"] == "fixed: offline run" and row["replicas"] == 1
        assert len(row["sizing_trials"]) == 1
    solo = trnsim.serve("llama-3.1-8b", "p5.48xlarge", 1, offline=True, requests=200, slo="mlperf-server")
    assert j["systems"][0]["output_token_throughput_tps"] == solo["output_token_throughput_tps"]
