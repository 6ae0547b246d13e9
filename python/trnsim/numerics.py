"""Number formats of trnsim: the dtype table and conversions to and from float32.

Every function takes array-likes (converted to contiguous float32, or to the unsigned integer
width of the format's codes) and returns new numpy arrays. Encoding with round-to-nearest-even
matches ml_dtypes 0.6.0 bit for bit (numpy for fp16), NaN outputs included. MX block formats
put their blocks of 32 along the last axis of an array.

    >>> from trnsim import numerics as tn
    >>> tn.encode([1.0, 500.0], "fp8_e4m3")           # 500 overflows: NaN, as in ml_dtypes
    array([ 56, 127], dtype=uint8)
    >>> tn.quantize([0.1], "bf16")
    array([0.10009766], dtype=float32)
"""
from __future__ import annotations

import numpy as np

from trnsim import _core
from trnsim._core import ShapeError, TrnsimError, UnsupportedError

_n = _core.numerics

__all__ = [
    "dtypes", "dtype_info", "storage_bytes", "encode", "decode", "quantize", "mx_quantize",
    "mx_dequantize", "sparse_pack", "sparse_unpack",
]

_CODE_TYPES = {8: np.uint8, 4: np.uint8, 16: np.uint16, 32: np.uint32}


def dtypes() -> list[dict]:
    """The dtype table: one dict per format (name, bits, exponent/mantissa bits, limits...)."""
    return _n.dtypes()


def dtype_info(dtype: str) -> dict:
    """The table row of one dtype, by canonical name or alias (e.g. "bfloat16")."""
    return _n.dtype_info(dtype)


def storage_bytes(dtype: str, n_elements: float) -> float:
    """Bytes to store n elements (MX formats include their scales, fp4 packs two per byte)."""
    return _n.storage_bytes(dtype, float(n_elements))


def _floats(x) -> np.ndarray:
    a = np.asarray(x, dtype=np.float32)  # (np.ascontiguousarray would turn 0-d into 1-d)
    return a if a.flags.c_contiguous else a.copy(order="C")


def _codes(bits, dtype: str, what: str | None = None) -> np.ndarray:
    """Codes as the unsigned type of the format's slot. Integers must fit it; an array of an
    ml_dtypes type of the same width (e.g. bfloat16) is reinterpreted as its bit patterns."""
    want = np.dtype(_CODE_TYPES[dtype_info(dtype)["bits"]])
    a = np.asarray(bits)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    if a.dtype == want:
        return a
    if a.dtype.kind in "uV" and a.dtype.itemsize == want.itemsize:
        return a.view(want)
    if a.dtype.kind not in "iu":
        raise TrnsimError(f"{what or 'codes of ' + dtype} must be integers ({want.name}), "
                          f"got {a.dtype}")
    if a.size and (a.min() < 0 or a.max() > np.iinfo(want).max):
        top = np.iinfo(want).max
        raise TrnsimError(f"{what or 'codes of ' + dtype} must lie in [0, {top}], "
                          f"got values in [{a.min()}, {a.max()}]")
    return a.astype(want)


def encode(x, dtype: str, rounding: str = "rne", seed: int = 0, overflow: str = "default",
           offset: int = 0) -> np.ndarray:
    """float32 -> bit patterns (uint8 for 8-bit and fp4, uint16, uint32 for fp32).

    rounding: "rne" or "stochastic" (element i draws random bits from (seed, offset + i)).
    overflow: "default" (the format's rule: inf, or NaN for fp8_e4m3, +-6 for fp4) or
    "saturate" (finite overflow and infinities clamp to +-max; NaN stays NaN).
    """
    return _n.encode(_floats(x), dtype, rounding, seed, overflow, offset)


def decode(bits, dtype: str) -> np.ndarray:
    """Bit patterns -> float32 (exact)."""
    return _n.decode(_codes(bits, dtype), dtype)


def quantize(x, dtype: str, rounding: str = "rne", seed: int = 0, overflow: str = "default",
             offset: int = 0) -> np.ndarray:
    """Round float32 values to what `dtype` holds (encode then decode); works for MX formats."""
    return _n.quantize(_floats(x), dtype, rounding, seed, overflow, offset)


def mx_quantize(x, fmt: str, rounding: str = "rne", seed: int = 0, offset: int = 0):
    """OCP MX block quantisation along the last axis -> (elements uint8, scales uint8).

    scales has the shape of x with its last axis replaced by ceil(n / 32) E8M0 codes.
    """
    return _n.mx_quantize(_floats(x), fmt, rounding, seed, offset)


def mx_dequantize(elements, scales, fmt: str) -> np.ndarray:
    """Inverse of mx_quantize: element value times 2^(scale - 127); scale 0xFF gives NaN."""
    return _n.mx_dequantize(_codes(elements, "e8m0", "MX element codes"),
                            _codes(scales, "e8m0", "E8M0 scale codes"), fmt)


def sparse_pack(x, keep: int = 4, group: int = 16):
    """N:M structured sparsity of a 2-D array: per group of `group` consecutive values of a row,
    the `keep` largest magnitudes (ties: lower index; NaN ranks lowest) -> (values, indices),
    each of shape (rows, cols / group * keep), indices increasing within a group."""
    return _n.sparse_pack(_floats(x), keep, group)


def sparse_unpack(values, indices, cols: int, keep: int = 4, group: int = 16) -> np.ndarray:
    """Inverse of sparse_pack: a (rows, cols) array with zeros away from the kept positions."""
    return _n.sparse_unpack(_floats(values), _codes(indices, "int8", "sparsity indices"), int(cols),
                            keep, group)
