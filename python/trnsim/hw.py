"""Chip and system specs: the presets in configs/ and users' own YAML files.

The numbers come from the C++ core as the same JSON that ``trnsim specs --json`` prints (one
source of truth); these functions only turn it into Python dicts. A malformed file raises
``trnsim.ConfigError`` with a one-line message naming the file, line, field and expectation.

A name is a preset ("trn2", "trn2.48xlarge"); a string containing "/" or ending in ".yaml" is a
file path, and so is any ``os.PathLike``.
"""
from __future__ import annotations

import json
import os
from typing import Iterable, Union

from trnsim import _core

NameOrPath = Union[str, "os.PathLike[str]"]

__all__ = ["specs", "load_chip", "load_system", "chip_presets", "system_presets", "preset_yaml"]


def _ref(x: NameOrPath) -> str:
    """A preset name as is; a PathLike as a path the core recognises as one (it has a '/')."""
    if isinstance(x, os.PathLike):
        p = os.fspath(x)
        return p if "/" in p else os.path.join(".", p)
    if not isinstance(x, str):
        raise _core.ConfigError(f"expected a preset name or a file path, got {type(x).__name__}")
    return x


def _refs(xs: Union[None, NameOrPath, Iterable[NameOrPath]]) -> list[str] | None:
    if xs is None:
        return None
    if isinstance(xs, (str, os.PathLike)):
        return [_ref(xs)]
    return [_ref(x) for x in xs]


def specs(chips=None, systems=None) -> dict:
    """``{"chips": [...], "systems": [...]}``, as ``trnsim specs --json``.

    With neither argument: every preset. Otherwise exactly the chips and systems named (each a
    preset name or a YAML file path; a single name may be given without a list).
    """
    return json.loads(_core.hw.specs_json(_refs(chips), _refs(systems)))


def load_chip(name_or_path: NameOrPath) -> dict:
    """One chip as a dict (the entries of ``specs()["chips"]``)."""
    return json.loads(_core.hw.load_chip_json(_ref(name_or_path)))


def load_system(name_or_path: NameOrPath) -> dict:
    """One system as a dict, its chip included under ``"chip"``."""
    return json.loads(_core.hw.load_system_json(_ref(name_or_path)))


def chip_presets() -> list[str]:
    return list(_core.hw.preset_names("chip"))


def system_presets() -> list[str]:
    return list(_core.hw.preset_names("system"))


def preset_yaml(name: str) -> str:
    """A preset's YAML, comments and sources included: a starting point for your own file."""
    return _core.hw.preset_yaml(name)
