"""The sweep file: plain YAML, the command and its fixed options as keys, `axes:` mapping option
names to lists (a grid), or `samples: N` (+ `seed:`) with ranges for a seeded random search.

    command: collective          # llm, serve, train, compare, run, kernel, collective, tco
    system: trn2.48xlarge
    axes:
      op: [all-reduce, all-gather]
      sizes: [1M, 64M]

    samples: 16                  # random search instead of the grid
    seed: 1
    axes:
      batch: {min: 1, max: 64, log: true}   # integers stay integers
      tp: [4, 8, 16]                         # a list is a choice
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

COMMANDS = ("llm", "serve", "train", "compare", "run", "collective", "kernel", "tco")
# Points of one sweep (a grid's product, or samples:). 10^5: each point is a process run (a day at
# one second each); 10^6 took over 60 s to enumerate, id and spell out before the first launch (fuzz).
MAX_POINTS = 100_000
MAX_FILE_BYTES = 16 << 20   # a sweep file is a few lines
MAX_NODES = 100_000         # values in the file, aliases expanded
RESERVED = {"command", "axes", "samples", "seed", "trnsim", "args", "timeout_s", "env"}


class SweepSpecError(ValueError):
    """A sweep file that cannot run: the message names the file, the field and what was expected."""


@dataclass
class Sweep:
    command: str
    fixed: dict[str, Any]
    axes: dict[str, Any]
    samples: int | None = None
    seed: int = 0
    args: list[str] = field(default_factory=list)  # positional arguments (a model file, a kernel name)
    trnsim: str | None = None  # the command's path, when not the default
    timeout_s: float | None = None
    source: str = "<dict>"
    env: dict[str, str] = field(default_factory=dict)  # environment of each point; {point_id} is replaced

    def points(self) -> list[dict[str, Any]]:
        """Every point's options (fixed options and this point's axis values), in a stable order."""
        if self.samples is None:
            names = list(self.axes)
            return [{**self.fixed, **dict(zip(names, vals))} for vals in itertools.product(*self.axes.values())]
        rng = np.random.default_rng(self.seed)
        return [{**self.fixed, **{k: _draw(rng, v) for k, v in self.axes.items()}} for _ in range(self.samples)]


def _draw(rng: np.random.Generator, axis: Any) -> Any:
    if isinstance(axis, list):
        return axis[int(rng.integers(len(axis)))]
    lo, hi, log = axis["min"], axis["max"], bool(axis.get("log", False))
    u = rng.random()
    x = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo))) if log else lo + u * (hi - lo)
    if isinstance(lo, int) and isinstance(hi, int):
        return int(min(hi, max(lo, round(x))))
    return float(x)


def point_id(command: str, args: list[str], options: dict[str, Any]) -> str:
    """A short stable hash of what a point runs: the key that resume matches on."""
    text = json.dumps({"command": command, "args": args, "options": options}, sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _load_yaml(path: Path, where: str) -> Any:
    """The file's YAML, read bounded (/dev/zero has no end) as UTF-8; SweepSpecError otherwise."""
    import yaml
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise SweepSpecError(f"{where}: no such file") from None
    except OSError as e:
        raise SweepSpecError(f"{where}: cannot read: {e.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise SweepSpecError(f"{where}: larger than {MAX_FILE_BYTES} bytes; is it a sweep file?")
    try:
        return yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise SweepSpecError(f"{where}: not UTF-8 text (byte {e.start})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark else ""
        raise SweepSpecError(f"{where}: not valid YAML{at}: {getattr(e, 'problem', e)}") from None
    except RecursionError:
        raise SweepSpecError(f"{where}: nested too deeply") from None


def _check_keys_and_size(where: str, doc: dict) -> None:
    """Every mapping key a string (point ids sort them), and the document small once aliases are
    expanded: a YAML alias bomb is a few lines that every point would copy and hash."""
    stack, seen = [doc], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            raise SweepSpecError(f"{where}: more than {MAX_NODES} values once aliases are expanded")
        if isinstance(v, dict):
            for k in v:
                if not isinstance(k, str):
                    raise SweepSpecError(f"{where}: key {k!r}: expected a name (text)")
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def _check_axis(where: str, name: str, v: Any, random: bool) -> None:
    if isinstance(v, list):
        if not v:
            raise SweepSpecError(f"{where}: axes.{name}: an empty list (expected at least one value)")
        return
    if random and isinstance(v, dict) and {"min", "max"} <= set(v):
        lo, hi = v["min"], v["max"]
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in (lo, hi)) or lo > hi:
            raise SweepSpecError(f"{where}: axes.{name}: expected numbers with min <= max, got {v}")
        if v.get("log") and lo <= 0:
            raise SweepSpecError(f"{where}: axes.{name}: a log range needs min > 0, got {lo}")
        return
    want = "a list, or {min: .., max: ..} with samples:" if random else "a list of values (ranges need samples: N)"
    raise SweepSpecError(f"{where}: axes.{name}: expected {want}, got {v!r}")


def parse_spec(spec: Union[str, os.PathLike, dict]) -> Sweep:
    """A Sweep from a YAML file or a dict of the same shape; SweepSpecError on a malformed one."""
    if isinstance(spec, dict):
        doc, where = dict(spec), "<dict>"
    else:
        where = str(spec)
        doc = _load_yaml(Path(spec), where)
    if not isinstance(doc, dict):
        raise SweepSpecError(f"{where}: expected a mapping with command: and axes:")
    _check_keys_and_size(where, doc)
    cmd = doc.get("command")
    if cmd not in COMMANDS:
        raise SweepSpecError(f"{where}: command: expected one of {', '.join(COMMANDS)}, got {cmd!r}")
    axes = doc.get("axes") or {}
    if not isinstance(axes, dict):
        raise SweepSpecError(f"{where}: axes: expected a mapping of option names to lists")
    samples = doc.get("samples")
    if samples is not None and (not isinstance(samples, int) or isinstance(samples, bool) or not 1 <= samples <= MAX_POINTS):
        raise SweepSpecError(f"{where}: samples: expected a positive integer (at most {MAX_POINTS}), got {samples!r}")
    for k, v in axes.items():
        _check_axis(where, k, v, samples is not None)
    grid = math.prod(len(v) for v in axes.values()) if samples is None else samples
    if grid > MAX_POINTS:
        raise SweepSpecError(f"{where}: axes: a grid of {grid} points, above the limit of {MAX_POINTS}; "
                             f"use samples: N for a random search")
    fixed = {k: v for k, v in doc.items() if k not in RESERVED}
    both = sorted(set(fixed) & set(axes))
    if both:
        raise SweepSpecError(f"{where}: {', '.join(both)}: both a fixed option and an axis")
    args = doc.get("args") or []
    if not isinstance(args, list):
        args = [args]
    seed = doc.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SweepSpecError(f"{where}: seed: expected a non-negative integer, got {seed!r}")
    timeout_s = doc.get("timeout_s")
    if timeout_s is not None and (not isinstance(timeout_s, (int, float)) or isinstance(timeout_s, bool)
                                  or not 0 < timeout_s < math.inf):
        raise SweepSpecError(f"{where}: timeout_s: expected a positive number of seconds, got {timeout_s!r}")
    exe = doc.get("trnsim")
    if exe is not None and not isinstance(exe, str):
        raise SweepSpecError(f"{where}: trnsim: expected the path of the trnsim command, got {exe!r}")
    env = doc.get("env") or {}
    if not isinstance(env, dict):
        raise SweepSpecError(f"{where}: env: expected a mapping of variable names to values")
    return Sweep(cmd, fixed, axes, samples, seed, [str(a) for a in args], exe, timeout_s, where,
                 {str(k): str(v) for k, v in env.items()})
