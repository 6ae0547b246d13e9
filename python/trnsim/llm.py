"""LLM inference on model descriptions: the same numbers as ``trnsim llm``.

``llm()`` simulates a batch of prompts prefilled and decoded by a model description (a preset
of ``configs/models`` or a Hugging Face ``config.json``) on a Trainium system with a parallel
layout, and returns the dict of ``trnsim llm --json``: ``kind`` "llm", ``ttft_s``, ``tpot_s``,
``e2e_s`` (= ``time_s``), ``output_tokens_per_s``, ``memory_bytes_per_core`` and the decode-step
breakdown. Bad input raises ``trnsim.TrnsimError`` subclasses with a one-line message.
"""
from __future__ import annotations

import json
from typing import Optional

from trnsim import _core

__all__ = ["llm", "llm_model", "llm_models"]


def llm(model: str, system: str, tp: int, *, batch: int = 1, input: int = 128, output: int = 128, pp: int = 1,
        ep: int = 1, lnc: int = 0, dtype: str = "bf16", weights: str = "bf16", kv_dtype: str = "bf16",
        trace: Optional[str] = None) -> dict:
    """TTFT, TPOT, throughput and memory of ``model`` on ``system`` at tensor parallelism ``tp``.

    ``lnc`` 0 is the chip's default logical-core size (2 on Trn2/Trn3, else 1); ``trace`` a
    path for a Chrome trace of the prefill and the first decode step.
    """
    return json.loads(_core.llm.llm(model, system, tp, pp, ep, lnc, dtype, weights, kv_dtype, batch, input, output,
                                     trace or ""))


def llm_model(name_or_path: str) -> dict:
    """The description of a model: sizes, parameter counts and the KV elements per token."""
    return json.loads(_core.llm.model(name_or_path))


def llm_models() -> list[str]:
    """The model presets (configs/models)."""
    return list(_core.llm.model_presets())
