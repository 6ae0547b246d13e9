"""Energy, power caps, the GPU baseline and cost through the CLI and the Python API, each against
a closed form from the configs' coefficients or a published figure (docs/power-and-cost.md)."""
import json
import subprocess

import pytest

from cli_path import trnsim_cli
import trnsim


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([trnsim_cli(), *args], capture_output=True, text=True, timeout=120)


def cli_json(*args: str) -> dict:
    p = cli(*args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_kernel_energy_is_the_sum_of_its_units():
    j = cli_json("kernel", "matmul", "--m", "256", "--n", "512", "--k", "512")
    assert j["kind"] == "kernel"
    assert j["energy_j"] == pytest.approx(sum(j["energy_by_unit_j"].values()), rel=1e-12)
    assert j["average_power_w"] == pytest.approx(j["energy_j"] / j["time_s"], rel=1e-12)
    assert j["peak_power_w"] >= j["average_power_w"]
    # Static power over the run: the trn2 config's 150 W.
    assert j["energy_by_unit_j"]["static"] == pytest.approx(150 * j["time_s"], rel=1e-9)
    assert sum(u["energy_j"] for u in j["units"]) == pytest.approx(
        j["energy_j"] - j["energy_by_unit_j"]["static"] - j["energy_by_unit_j"]["HBM"], rel=1e-9)


def test_power_cap_throttles_within_one_percent():
    free = cli_json("kernel", "matmul", "--m", "2048", "--n", "2048", "--k", "2048", "--timing-only")
    cap = 0.9 * free["average_power_w"]
    j = cli_json("kernel", "matmul", "--m", "2048", "--n", "2048", "--k", "2048", "--timing-only",
                 "--power-cap", str(cap))
    assert j["power_cap"]["met"]
    assert cap * 0.99 <= j["average_power_w"] <= cap * (1 + 1e-9)
    assert j["clock_scale"] < 1 and j["time_s"] > free["time_s"]


def test_clock_scale_out_of_range_is_a_one_line_error():
    p = cli("kernel", "matmul", "--clock-scale", "0.2")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "clock scale 0.2" in p.stderr


def test_collective_energy_is_the_sum_of_links_hbm_and_static():
    j = cli_json("collective", "--op", "all-reduce", "--system", "trn2.48xlarge", "--sizes", "64M")
    r = j[0] if isinstance(j, list) else j
    assert r["kind"] == "collective"
    assert r["energy_j"] == pytest.approx(sum(r["energy_by_unit_j"].values()), rel=1e-12)
    assert r["energy_by_unit_j"]["EFA"] == 0 and r["energy_by_unit_j"]["NeuronLink"] > 0


def test_gpu_offline_matches_tensorrt_llm_row():
    # NVIDIA/TensorRT-LLM perf-overview.md: Llama-3.1-8B FP8 on H100 SXM, 1000/1000: 15,220 tok/s.
    r = trnsim.gpu_offline("llama-3.1-8b", "p5.48xlarge", tp=1, dtype="fp8", input_tokens=1000, output_tokens=1000)
    assert r["output_tokens_per_s"] == pytest.approx(15220, rel=0.15)
    assert 0 < r["average_power_w"] < 2 * 700  # one H100 under load


def test_tco_figures_follow_the_printed_assumptions(tmp_path):
    result = tmp_path / "r.json"
    result.write_text(json.dumps({"kind": "llm", "output_tokens_per_s": 10000.0, "tp": 2, "average_power_w": 1200.0}))
    j = cli_json("tco", "--system", "p5.48xlarge", "--result", str(result), "--utilisation", "0.5")
    a = j["assumptions"]
    assert j["kind"] == "tco" and a["replicas_per_instance"] == 4
    million_per_hour = 10000 * 4 * 3600 * 0.5 / 1e6
    assert j["cloud"]["usd_per_million_tokens"] == pytest.approx(55.04 / million_per_hour, rel=1e-12)
    capex = a["capex"]["per_chip_usd"] * 8 + a["capex"]["per_instance_usd"] + a["capex"]["network_per_instance_usd"]
    power_w = (600 * 0.5 + a["idle_chip_power_w"] * 0.5) * 8 + a["host_power_w"]
    owned = capex / (4 * 8760) + capex * a["capex"]["maintenance_per_year"] / 8760 + power_w * 1.15 / 1000 * 0.08
    assert j["owned"]["usd_per_instance_hour"] == pytest.approx(owned, rel=1e-12)
    assert j["energy"]["tokens_per_s_per_mw_chip"] == pytest.approx(40000 / 4800 * 1e6, rel=1e-12)


def test_tco_without_a_price_says_so(tmp_path):
    result = tmp_path / "r.json"
    result.write_text(json.dumps({"output_tokens_per_s": 100.0}))
    j = cli_json("tco", "--system", "trn2.48xlarge", "--result", str(result))
    assert j["cloud"]["usd_per_million_tokens"] is None and "--price" in j["cloud"]["note"]
    p = cli("tco", "--system", "trn2.48xlarge", "--result", str(tmp_path / "missing.json"))
    assert p.returncode == 2 and "missing.json" in p.stderr


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((512, 1024)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((1024, 512)).astype(np.float32), "w2")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("MatMul", ["r", "w2"], ["y"])], "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 512])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256, 512])], [w1, w2])
    path = tmp_path_factory.mktemp("mlp") / "mlp.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return str(path)


def test_run_energy_clock_scale_and_power_cap(mlp):
    top = cli_json("run", mlp, "--dtype", "bf16", "--timing-only")
    assert top["kind"] == "run" and top["clock_scale"] == 1
    assert top["energy_j"] == pytest.approx(sum(top["energy_by_unit_j"].values()), rel=1e-12)
    assert top["energy_by_unit_j"]["static"] == pytest.approx(150 * top["time_s"], rel=1e-9)
    slow = cli_json("run", mlp, "--dtype", "bf16", "--timing-only", "--clock-scale", "0.8")
    assert slow["clock_scale"] == 0.8 and slow["time_s"] > top["time_s"]
    cap = 0.95 * top["average_power_w"]
    capped = cli_json("run", mlp, "--dtype", "bf16", "--timing-only", "--power-cap", str(cap))
    assert capped["power_cap"]["met"]
    assert cap * 0.99 <= capped["average_power_w"] <= cap * (1 + 1e-9)


def test_tensor_parallel_run_energy(mlp):
    # TP 8 at trn2's LNC=2: one rank per logical core, 4 per chip, so 2 chips' static power.
    j = cli_json("run", mlp, "--dtype", "bf16", "--timing-only", "--system", "trn2.48xlarge", "--tp", "8")
    assert j["kind"] == "run" and j["chips"] == 2 and j["lnc"] == 2
    assert j["energy_j"] == pytest.approx(sum(j["energy_by_unit_j"].values()), rel=1e-12)
    assert j["energy_by_unit_j"]["static"] == pytest.approx(2 * 150 * j["time_s"], rel=1e-9)
    assert j["energy_by_unit_j"]["NeuronLink"] > 0


def test_python_run_api_clock_scale_and_power_caps(mlp):
    """CompiledModel.run(clock_scale=, power_cap=, power_cap_scope=, system=) = `trnsim run`."""
    m = trnsim.compile_onnx(mlp, chip="trn2", dtype="bf16", mode="timing")
    m.run({}, mode="timing")
    top = m.report
    assert top["clock_scale"] == 1 and "power_cap" not in top
    m.run({}, mode="timing", clock_scale=0.8)
    cli_slow = cli_json("run", mlp, "--dtype", "bf16", "--timing-only", "--clock-scale", "0.8")
    assert m.report["clock_scale"] == 0.8 and m.report["time_s"] == cli_slow["time_s"]
    assert m.report["energy_j"] == cli_slow["energy_j"]
    # An instance of trn2.48xlarge: 16 chips and a 2,500 W host (configs/systems/trn2.48xlarge.yaml).
    cap = 0.95 * top["average_power_w"] * 16 + 2500
    m.run({}, mode="timing", power_cap=cap, power_cap_scope="instance", system="trn2.48xlarge")
    pc = m.report["power_cap"]
    assert pc["scope"] == "instance" and pc["chips_in_scope"] == 16 and pc["fixed_power_w"] == 2500
    assert pc["met"] and 0.99 * cap <= pc["scope_power_w"] <= cap * (1 + 1e-12)
    assert m.report["average_power_w"] == pytest.approx(pc["power_w"], rel=1e-9)
    cli_cap = cli_json("run", mlp, "--dtype", "bf16", "--timing-only", "--power-cap", repr(cap), "--power-cap-scope",
                       "instance", "--system", "trn2.48xlarge")
    assert cli_cap["power_cap"] == pc and cli_cap["time_s"] == m.report["time_s"]
    with pytest.raises(trnsim.ConfigError, match="needs --system"):
        m.run({}, mode="timing", power_cap=cap, power_cap_scope="rack")
