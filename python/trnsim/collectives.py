"""Collectives on the simulated fabric: the same numbers as ``trnsim collective``.

``collective()`` times an op at one or more sizes and returns one dict per size, with the fields
of ``trnsim collective --json`` (``size_bytes``, ``count``, ``time_s``, ``algbw_gbps``,
``busbw_gbps``, ``algorithm``, ...; NCCL's busbw convention). ``collective_run()`` runs the op on
real fp32 data, one row per rank, and returns what each rank ends with. Bad input raises
``trnsim.TrnsimError`` subclasses (ValueError) with a one-line message.
"""
from __future__ import annotations

import json
from typing import Iterable, Optional, Union

import numpy as np

from trnsim import _core
from trnsim.api_args import checked

__all__ = ["collective", "collective_run", "collective_algorithms", "collective_ops"]

Sizes = Union[int, str, Iterable[Union[int, str]]]


def _sizes(sizes: Sizes, step_factor: float) -> list[int]:
    if isinstance(sizes, str):
        return list(_core.collectives.parse_sizes(sizes, step_factor))
    if isinstance(sizes, (int, np.integer)):
        return [int(sizes)]
    out: list[int] = []
    for s in sizes:
        out += _sizes(s, step_factor)
    return out


@checked
def collective(op: str, ranks: Optional[int], system: str, sizes: Sizes = "1K:1G", dtype: str = "fp32",
               algorithm: Optional[str] = None, *, ranks_per_chip: Optional[int] = None, systems: int = 1,
               step_factor: float = 2.0, in_program: bool = False) -> list[dict]:
    """Time ``op`` on ``ranks`` ranks (NeuronCores; None = all) of ``system`` at each size.

    ``sizes``: bytes as an int, a string like ``"1K:1G"`` (a range, x ``step_factor``) or
    ``"64K,1M"``, or a list of either. ``algorithm``: None/"auto" (fastest) or a name from
    ``collective_algorithms()``. ``systems`` > 1 joins copies of the system over EFA.
    ``in_program``: a collective inside a compiled model (one semaphore hop instead of
    nccom-test's program launch; the CLI's ``--in-program``).
    """
    text = _core.collectives.time(op, ranks or 0, system, _sizes(sizes, step_factor), dtype, algorithm or "auto",
                                  ranks_per_chip or 0, systems, in_program)
    return json.loads(text)


@checked
def collective_run(op: str, inputs, system: str, algorithm: Optional[str] = None, *,
                   ranks_per_chip: Optional[int] = None, systems: int = 1) -> np.ndarray:
    """Run ``op`` on real data: ``inputs[r]`` is rank r's input (2-D, one row per rank).

    Returns one row per rank: all-reduce the sum, all-gather the rows concatenated,
    reduce-scatter rank r's piece of the sum, all-to-all the transposed pieces, permute the
    previous rank's row.
    """
    x = np.ascontiguousarray(np.asarray(inputs, dtype=np.float32))
    if x.ndim != 2:
        raise _core.ShapeError(f"collective_run: inputs must be 2-D [ranks, elements], got shape {x.shape}")
    return _core.collectives.run(op, x, system, algorithm or "auto", ranks_per_chip or 0, systems)


def collective_algorithms() -> list[str]:
    return list(_core.collectives.algorithms())


def collective_ops() -> list[str]:
    return list(_core.collectives.ops())
