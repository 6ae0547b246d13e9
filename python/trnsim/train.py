"""Training on the simulated system: the same numbers as ``trnsim train``.

``train(model, system, nodes=..., tp=..., ...)`` returns the dict of ``trnsim train --json``:
``time_s`` (the step), ``sequences_per_s``, ``tokens_per_s``, ``mfu_percent``, ``step`` (the
breakdown: ``compute_s``, ``exposed_comm_s``, ``bubble_s``, ``optimizer_s``, ...),
``memory_per_core``, and with ``tokens`` (or ``steps``) a ``train`` dict with the expected time,
goodput and (with ``fail_at``) the failure timeline. Keyword names are the CLI's options in
snake_case. ``system`` may be a GPU system (``p5.48xlarge``, ...): the GPU roofline baseline's
step (one rank per GPU; ``ep``, ``cp`` and ``lnc`` are errors there). A layout that does not fit raises ``trnsim.ShapeError`` saying by how much; bad
options raise ``trnsim.ConfigError``.
"""
from __future__ import annotations

import json
from typing import Optional, Sequence

from trnsim import _core
from trnsim.api_args import checked, json_request

__all__ = ["train"]


@checked
def train(model: str, system: str = "trn1.32xlarge", *, global_batch: int, seq: int, nodes: int = 1,
          tp: int = 1, pp: int = 1, dp: Optional[int] = None, ep: int = 1, cp: int = 1, zero: int = 0,
          micro_batch: int = 1, recompute: str = "none", dtype: str = "bf16", precision: str = "fp32-master",
          optimizer: str = "adamw", schedule: str = "1f1b", virtual_stages: int = 1,
          fail_at: Optional[Sequence[int]] = None, **more) -> dict:
    """Simulate a training step of ``model`` on ``nodes`` x ``system``; see the module docstring.

    ``more``: any other option of ``trnsim train`` (``tokens``, ``steps``, ``mtbf_hours``,
    ``node_mtbf_hours``, ``link_mtbf_hours``, ``checkpoint_gbps``, ``checkpoint_interval_s``,
    ``reschedule_s``, ``efa_oversubscription``, ``degraded_link``, ``straggler_slowdown``, ``lnc``).
    """
    request = dict(model=model, system=system, global_batch=global_batch, seq=seq, nodes=nodes, tp=tp, pp=pp,
                   dp=dp, ep=ep, cp=cp, zero=zero, micro_batch=micro_batch, recompute=recompute, dtype=dtype,
                   precision=precision, optimizer=optimizer, schedule=schedule, virtual_stages=virtual_stages,
                   fail_at=list(fail_at) if fail_at else None, **more)
    return json.loads(_core.train.run(json_request("trnsim.train", request)))
