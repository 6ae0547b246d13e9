"""ml_dtypes / numpy references shared by the numerics tests, and checks of the references
themselves (so a broken reference cannot make the other tests pass vacuously)."""
import ml_dtypes
import numpy as np

# trnsim name -> (reference numpy dtype, unsigned view type, number of codes)
FORMATS = {
    "bf16": (ml_dtypes.bfloat16, np.uint16, 1 << 16),
    "fp16": (np.float16, np.uint16, 1 << 16),          # numpy's own float16
    "fp8_e4m3": (ml_dtypes.float8_e4m3fn, np.uint8, 256),
    "fp8_e5m2": (ml_dtypes.float8_e5m2, np.uint8, 256),
    "fp8_e3m4": (ml_dtypes.float8_e3m4, np.uint8, 256),
    "fp4_e2m1": (ml_dtypes.float4_e2m1fn, np.uint8, 16),
    "e8m0": (ml_dtypes.float8_e8m0fnu, np.uint8, 256),
}


def ref_encode(x: np.ndarray, name: str) -> np.ndarray:
    """ml_dtypes' RNE conversion of float32 values, as bit patterns."""
    dt, ut, _ = FORMATS[name]
    with np.errstate(all="ignore"):
        return np.asarray(x, dtype=np.float32).astype(dt).view(ut)


def ref_decode(codes: np.ndarray, name: str) -> np.ndarray:
    dt, ut, _ = FORMATS[name]
    with np.errstate(all="ignore"):
        return np.asarray(codes, dtype=ut).view(dt).astype(np.float32)


def max_finite(name: str) -> float:
    return float(ml_dtypes.finfo(FORMATS[name][0]).max)


def all_codes(name: str) -> np.ndarray:
    _, ut, n = FORMATS[name]
    return np.arange(n, dtype=np.uint32).astype(ut)


def bits(a: np.ndarray) -> np.ndarray:
    """float32 array as its uint32 bit patterns (so NaNs compare by payload and sign)."""
    return np.asarray(a, dtype=np.float32).view(np.uint32)


def mismatches(got: np.ndarray, want: np.ndarray, x: np.ndarray | None = None, limit: int = 5):
    """A readable list of the first differing positions (empty when equal)."""
    bad = np.flatnonzero(np.asarray(got) != np.asarray(want))
    out = []
    for i in bad[:limit]:
        src = f"x=0x{int(bits(x)[i]):08x} " if x is not None else ""
        out.append(f"[{i}] {src}got 0x{int(got[i]):x} want 0x{int(want[i]):x}")
    return bad.size, out


def test_reference_encodes_known_values():
    one = np.array([1.0], dtype=np.float32)
    want = {"bf16": 0x3F80, "fp16": 0x3C00, "fp8_e4m3": 0x38, "fp8_e5m2": 0x3C,
            "fp8_e3m4": 0x30, "fp4_e2m1": 0x2, "e8m0": 0x7F}
    for name, code in want.items():
        assert int(ref_encode(one, name)[0]) == code, name
        assert ref_decode(np.array([code]), name)[0] == 1.0, name
    assert max_finite("fp8_e4m3") == 448 and max_finite("fp8_e3m4") == 15.5


def test_mismatches_reports_positions():
    n, first = mismatches(np.array([1, 2, 3]), np.array([1, 5, 3]))
    assert n == 1 and first[0].startswith("[1]")
