"""The GPU baseline (H100, H200, B200, GB300 systems in configs/gpus): offline throughput of a
decoder LLM from the per-op roofline (src/trnsim/workloads/gpu_step_cost.h).

``gpu_offline(model, "p5.48xlarge", tp=1, dtype="fp8", input_tokens=128, output_tokens=128)``
returns a dict (kind "llm": ``output_tokens_per_s``, ``batch``, ``step_time_s``,
``energy_per_output_token_j``, ``average_power_w``, ``breakdown_s``). ``model`` is a preset of
configs/models ("llama-3.1-8b") or a Hugging Face ``config.json`` path.
"""
from __future__ import annotations

import json

from trnsim import _core

__all__ = ["gpu_offline"]

def gpu_offline(model: str, system: str, tp: int = 1, dtype: str = "fp8", weights: str | None = None,
                kv_dtype: str | None = None, input_tokens: int = 128, output_tokens: int = 128,
                max_batch: int = 2048, max_num_tokens: int = 8192) -> dict:
    text = _core.gpu.offline(model, system, tp, dtype, weights or dtype, kv_dtype or dtype,
                             input_tokens, output_tokens, max_batch, max_num_tokens)
    return json.loads(text)
