"""The GPU baseline's checks outside its calibration set (bench/gpu_published_check.py) and the
model-FLOPs count behind the end-to-end utilisation argument (bench/gpu_step_breakdown.py):
Llama-2-70B's parameter count against its published size, the FLOPs per output token against
2 x parameters at the attention-free limit, and each check row against an independent rerun."""
import sys
from pathlib import Path

import pytest

import trnsim

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import gpu_published_check
        import gpu_step_breakdown
        yield gpu_published_check, gpu_step_breakdown
    finally:
        sys.path.pop(0)


def test_llama_2_70b_flops_per_token_is_twice_its_parameters(bench):
    _, bd = bench
    s = bd.model_shape("llama-2-70b")
    non_embedding = s["layers"] * bd.layer_params(s)
    # Meta's Llama-2-70B: 68.98 B parameters in all (the Hugging Face checkpoint's count), of which
    # 2 x 32,000 x 8,192 are the embedding and LM head; norms are the small rest.
    assert non_embedding + 2 * 32000 * 8192 == pytest.approx(68.98e9, rel=0.002)
    # One input and one output token: every weight twice (prefill token, decode token) and the LM
    # head once per output token; attention over 1-2 positions is negligible.
    f = bd.flops_per_output_token(s, 1, 1)
    assert f == pytest.approx(2 * non_embedding * 2 + 2 * 8192 * 32000, rel=1e-4)
    # Attention grows the count by 4 x heads x head_dim x layers per (query, key) pair.
    pairs = 1000 * 1000 / 2 + 300 * (1000 + 150)
    extra = bd.flops_per_output_token(s, 1000, 300) - (2 * non_embedding * 1300 / 300 + 2 * 8192 * 32000)
    assert extra == pytest.approx(4 * 64 * 128 * 80 * pairs / 300, rel=1e-9)


def test_every_check_row_names_its_source_and_reruns_independently(bench):
    gp, _ = bench
    rows = gp.rows()
    assert {r["kind"] for r in rows} == {"throughput", "ratio"}
    for r in rows:
        assert r["source"] and r["verified"] is False and "recalled" in r["note"]
        assert r["error"] == pytest.approx(r["simulated"] / r["published"] - 1)
        if r["kind"] == "throughput":
            one = trnsim.gpu_offline(r["model"], r["system"], tp=r["tp"], dtype=r["dtype"], kv_dtype="fp8",
                                     input_tokens=r["input_tokens"], output_tokens=r["output_tokens"])
            assert r["simulated"] == pytest.approx(one["output_tokens_per_s"] * r["gpus"] / r["tp"], rel=1e-12)


def test_one_gemm_binding_matches_the_efficiency_curve():
    import json
    import yaml
    from trnsim import _core
    eff = yaml.safe_load((REPO / "configs/gpus/h100.yaml").read_text())["efficiency"]
    # Compute-bound at 4096 rows: 1,979 TFLOP/s x gemm_max x rows / (rows + gemm_half_rows).
    g = json.loads(_core.gpu.gemm("llama-2-70b", "p5.48xlarge", 2, "fp8", 4096, 8192, 28672))
    assert g["tflops"] == pytest.approx(1979 * eff["gemm_max"] * 4096 / (4096 + eff["gemm_half_rows"]), rel=1e-9)
    # HBM-bound at 16 rows: fp8 weights plus bf16 activations at the memory efficiency of 3.35 TB/s.
    g = json.loads(_core.gpu.gemm("llama-2-70b", "p5.48xlarge", 2, "fp8", 16, 8192, 28672))
    want_s = (8192 * 28672 + 16 * (8192 + 28672) * 2) / (3.35e12 * eff["memory"])
    assert g["time_s"] == pytest.approx(want_s, rel=1e-9)
