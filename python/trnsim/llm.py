"""LLM inference on model descriptions: the same numbers as ``trnsim llm``.

``llm()`` simulates a batch of prompts prefilled and decoded by a model description (a preset
of ``configs/models`` or a Hugging Face ``config.json``) on a Trainium or GPU system with a parallel
layout, and returns the dict of ``trnsim llm --json``: ``kind`` "llm", ``ttft_s``, ``tpot_s``,
``e2e_s`` (= ``time_s``), ``output_tokens_per_s``, ``memory_bytes_per_core`` and the decode-step
breakdown. Bad input raises ``trnsim.TrnsimError`` subclasses with a one-line message.
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Optional

from trnsim import _core
from trnsim.api_args import checked

__all__ = ["llm", "llm_model", "llm_models"]


@checked
def llm(model, system: str, tp: int, *, batch: int = 1, input: int = 128, output: int = 128, pp: int = 1,
        ep: int = 1, lnc: int = 0, dtype: str = "bf16", weights: str = "bf16", kv_dtype: str = "bf16",
        trace: Optional[str] = None, micro_batches: int = 0, sequence_parallel: bool = False,
        clock_scale: float = 1.0, kv_buckets: Optional[str] = None, seq_len: int = 0,
        power_cap: Optional[float] = None, power_cap_scope: str = "chip") -> dict:
    """TTFT, TPOT, throughput and memory of ``model`` on ``system`` at tensor parallelism ``tp``.

    ``lnc`` 0 is the chip's default logical-core size (2 on Trn2/Trn3, else 1); ``trace`` a
    path for a Chrome trace of the prefill and the first decode step; ``micro_batches`` (with
    ``pp`` > 1) the micro-batches in flight, 0 = min(batch, pp); ``sequence_parallel`` splits the
    norms and residuals over the TP ranks (Megatron SP); ``clock_scale`` runs the engine clocks at
    that DVFS point (HBM and links keep their rates); ``power_cap`` (W, on a ``power_cap_scope`` of
    "chip", "instance" or "rack") throttles them until the generation's power fits (result
    ``power_cap``). ``seq_len`` is the compiled sequence length
    (0: input + output) and ``kv_buckets`` what the prefill and each decode step attend over:
    "compiled" (the whole ``seq_len``, as transformers-neuronx / NxD Inference compile one
    bucket; the default on Trainium), "pow2" (buckets 128, 256, ... up to ``seq_len``) or "exact"
    (the sequence's own tokens; the default on GPU systems, a paged KV cache). ``system`` may be
    a GPU system (``p5.48xlarge``, ...): the GPU roofline baseline, tensor parallel only, where
    ``lnc``, ``pp``, ``ep``, ``micro_batches`` and ``sequence_parallel`` are errors. ``model`` may also be a
    ``config.json``-style dict or a ``transformers`` config (anything with ``to_dict()``).
    """
    if not isinstance(model, str):
        return _with_config_file(model, lambda path: llm(path, system, tp, batch=batch, input=input, output=output,
                                                         pp=pp, ep=ep, lnc=lnc, dtype=dtype, weights=weights,
                                                         kv_dtype=kv_dtype, trace=trace, micro_batches=micro_batches,
                                                         sequence_parallel=sequence_parallel,
                                                         clock_scale=clock_scale, kv_buckets=kv_buckets,
                                                         seq_len=seq_len, power_cap=power_cap,
                                                         power_cap_scope=power_cap_scope))
    return json.loads(_core.llm.llm(model, system, tp, pp, ep, lnc, dtype, weights, kv_dtype, batch, input, output,
                                     trace or "", micro_batches, sequence_parallel,
                                     clock_scale, kv_buckets or "", seq_len, float(power_cap or 0), power_cap_scope))


def _with_config_file(config, fn):
    """Runs fn on a temporary config.json holding `config` (a dict or a transformers config)."""
    d = config.to_dict() if hasattr(config, "to_dict") else config
    if not isinstance(d, dict):
        raise _core.ConfigError(f"model: expected a preset name, a config.json path, a dict or a transformers config, got {type(config).__name__}")
    name = str(d.get("_name_or_path") or d.get("model_type") or "model").replace("/", "_") or "model"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.json")
        with open(path, "w") as f:
            json.dump(d, f, default=str)
        return fn(path)


def llm_model(name_or_path) -> dict:
    """The description of a model: sizes, parameter counts and the KV elements per token."""
    if not isinstance(name_or_path, str):
        return _with_config_file(name_or_path, llm_model)
    return json.loads(_core.llm.model(name_or_path))


def llm_models() -> list[str]:
    """The model presets (configs/models)."""
    return list(_core.llm.model_presets())
