"""The Python API's boundary: each public function's arguments are checked against its
annotations before anything runs, so that a wrong type, NaN, inf or an integer past int64 ends
in one `trnsim.ConfigError` line naming the function and the argument (nanobind raised a
multi-line TypeError listing the binding's signature, `float()` a raw ValueError, and
`json.dumps` wrote NaN that the C++ JSON reader refused as an "internal error").

    @checked
    def llm(model, system: str, tp: int, *, batch: int = 1, ...): ...
"""
from __future__ import annotations

import collections.abc as cabc
import functools
import inspect
import json
import math
import numbers
import os
import types
import typing
from typing import Any

from trnsim import _core

_INT64 = (-(2**63), 2**63 - 1)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:32] + f"... ({len(text)} characters)"


def _matches(value: Any, hint: Any) -> bool:
    """Whether `value` is of the annotated type (the outer type; dict and list items too)."""
    if hint is Any or hint is inspect.Parameter.empty:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(_matches(value, a) for a in typing.get_args(hint))
    if hint is None or hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, (bool,)) or type(value).__name__ == "bool_"
    if hint is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin in (dict, cabc.Mapping):
        args = typing.get_args(hint)
        return isinstance(value, cabc.Mapping) and (
            not args or all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in value.items()))
    if origin in (list, tuple, cabc.Sequence, cabc.Iterable):
        args = typing.get_args(hint)
        return isinstance(value, (list, tuple)) and (not args or all(_matches(v, args[0]) for v in value))
    if origin is os.PathLike or hint is os.PathLike:
        return isinstance(value, os.PathLike)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True  # an annotation this check does not know: the function checks it


def _value_problem(value: Any) -> str:
    """What is wrong with a value of the right type: NaN/inf, an integer past int64, bytes."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and not math.isfinite(value):
        return "is not a finite number"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and not (
            _INT64[0] <= int(value) <= _INT64[1]):
        return "is past the int64 range"
    if isinstance(value, cabc.Mapping):
        for v in value.values():
            if p := _value_problem(v):
                return "holds a value that " + p
    if isinstance(value, (list, tuple)):
        for v in value:
            if p := _value_problem(v):
                return "holds a value that " + p
    return ""


def _type_name(hint: Any) -> str:
    text = hint if isinstance(hint, str) else getattr(hint, "__name__", None) or str(hint)
    return text.replace("typing.", "").replace("NoneType", "None")


def check_argument(where: str, name: str, value: Any, hint: Any = Any) -> None:
    if not _matches(value, hint):
        raise _core.ConfigError(f"{where}: argument '{name}' = {_describe(value)} ({type(value).__name__}), "
                                f"expected {_type_name(hint)}")
    if problem := _value_problem(value):
        raise _core.ConfigError(f"{where}: argument '{name}' = {_describe(value)} {problem}")


def checked(fn):
    """Checks each argument of `fn` against its annotation, and every value (** options too)
    for NaN, inf and integers past int64, before `fn` runs."""
    sig = inspect.signature(fn)
    hints = None
    where = f"trnsim.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        nonlocal hints
        if hints is None:
            hints = typing.get_type_hints(fn)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise _core.ConfigError(f"{where}: {e}") from None
        for name, value in bound.arguments.items():
            param = sig.parameters[name]
            if param.kind is param.VAR_KEYWORD:
                for k, v in value.items():
                    check_argument(where, k, v)
            elif param.kind is param.VAR_POSITIONAL:
                for v in value:
                    check_argument(where, name, v)
            else:
                check_argument(where, name, value, hints.get(name, Any))
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            # nanobind's signature mismatch: a value the annotation allows but the binding's
            # C++ type does not hold (an int past 2^31 - 1 for an int, a negative for an unsigned).
            first = str(e).splitlines()[0] if str(e) else ""
            if "incompatible function arguments" not in first:
                raise
            raise _core.ConfigError(f"{where}: an argument is outside what the simulator takes (an integer past "
                                    f"2^31 - 1 where it holds an int, or negative where it holds an unsigned): "
                                    f"{first.split('. ')[0]}") from None

    return wrapper


def json_request(where: str, request: dict) -> str:
    """A request for the C++ side as JSON: a value JSON cannot carry (bytes, an object) is a
    ConfigError naming its key, never a raw TypeError or a NaN the C++ reader refuses."""
    for key, value in request.items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise _core.ConfigError(f"{where}: '{key}' = {_describe(value)} ({type(value).__name__}) "
                                    "cannot be passed on (expected numbers, strings, lists or dicts of them, "
                                    "all finite)") from None
    return json.dumps(request, allow_nan=False)
