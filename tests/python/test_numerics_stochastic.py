"""Stochastic rounding: unbiased (mean error of 10^6 samples within 4 standard errors of 0),
only ever the two grid neighbours of x (taken from ml_dtypes' own value table), reproducible
per seed, and independent of how an array is split into calls."""
import numpy as np
import pytest

from test_numerics_reference import FORMATS, ref_decode, all_codes
from trnsim import numerics as tn

N = 1_000_000

CASES = [
    ("fp8_e4m3", 1.0 + 0.3 / 8), ("fp8_e4m3", 0.01), ("fp8_e4m3", -300.7),
    ("fp8_e5m2", 3e-6), ("fp8_e5m2", 1000.3), ("fp8_e3m4", 0.07), ("fp8_e3m4", -7.77),
    ("bf16", 1 / 3), ("bf16", -1e-39), ("fp16", 1e-6), ("fp16", 1234.567),
    ("fp4_e2m1", 2.2), ("fp4_e2m1", -0.3), ("e8m0", 3.0), ("e8m0", 8e-39),
    ("int8", 2.7), ("int8", -0.4),
]


def _neighbours(name, x):
    if name == "int8":
        return np.floor(x), np.ceil(x)
    with np.errstate(invalid="ignore"):  # signalling-NaN codes
        grid = ref_decode(all_codes(name), name).astype(np.float64)
    grid = np.unique(grid[np.isfinite(grid)])
    return grid[grid <= x].max(), grid[grid >= x].min()


@pytest.mark.parametrize("name,x", CASES)
def test_unbiased_and_only_neighbours(name, x):
    x32 = np.float32(x)
    out = tn.quantize(np.full(N, x32), name, rounding="stochastic", seed=12345).astype(np.float64)
    lo, hi = _neighbours(name, float(x32))
    assert lo < float(x32) < hi, "test value should lie strictly between two grid points"
    assert np.all((out == lo) | (out == hi)), f"values outside {{{lo}, {hi}}}: {np.unique(out)}"
    err = out - float(x32)
    se = err.std() / np.sqrt(N)
    assert abs(err.mean()) < 4 * se, f"{name} x={x}: mean error {err.mean():.3g}, 4 SE {4 * se:.3g}"
    p_up = (float(x32) - lo) / (hi - lo)
    assert abs((out == hi).mean() - p_up) < 4 * np.sqrt(p_up * (1 - p_up) / N)


@pytest.mark.parametrize("name", ["bf16", "fp8_e4m3", "fp4_e2m1", "int8"])
def test_grid_values_are_left_alone(name):
    codes = np.arange(16 if name == "fp4_e2m1" else 256, dtype=np.uint8) if name != "bf16" \
        else np.arange(0, 1 << 16, 97, dtype=np.uint16)
    v = tn.decode(codes, name)
    v = v[np.isfinite(v)]
    q = tn.quantize(v, name, rounding="stochastic", seed=3)
    np.testing.assert_array_equal(q, v)


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(1).standard_normal(200_000).astype(np.float32) * 10


@pytest.mark.parametrize("name", ["bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "e8m0", "int8"])
def test_same_seed_same_result_other_seed_differs(x, name):
    a = tn.encode(x, name, rounding="stochastic", seed=5)
    b = tn.encode(x, name, rounding="stochastic", seed=5)
    c = tn.encode(x, name, rounding="stochastic", seed=6)
    np.testing.assert_array_equal(a, b)
    assert (a != c).mean() > 0.05


@pytest.mark.parametrize("name", ["bf16", "fp8_e4m3", "int8"])
def test_independent_of_chunking(x, name):
    whole = tn.encode(x, name, rounding="stochastic", seed=77)
    cuts = [0, 1, 1000, 65537, 123456, x.size]
    parts = [tn.encode(x[a:b], name, rounding="stochastic", seed=77, offset=a)
             for a, b in zip(cuts[:-1], cuts[1:])]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    # A 2-D view of the same data is the same flat sequence of counters.
    np.testing.assert_array_equal(
        tn.encode(x.reshape(400, 500), name, rounding="stochastic", seed=77).ravel(), whole)


def test_stochastic_quantize_is_encode_then_decode(x):
    codes = tn.encode(x, "fp8_e5m2", rounding="stochastic", seed=9, overflow="saturate")
    q = tn.quantize(x, "fp8_e5m2", rounding="stochastic", seed=9, overflow="saturate")
    np.testing.assert_array_equal(q, tn.decode(codes, "fp8_e5m2"))


def test_mx_stochastic_is_reproducible_and_chunk_independent(x):
    e1, s1 = tn.mx_quantize(x, "mxfp4", rounding="stochastic", seed=4)
    e2, s2 = tn.mx_quantize(x, "mxfp4", rounding="stochastic", seed=4)
    np.testing.assert_array_equal(e1, e2)
    e3, _ = tn.mx_quantize(x[:64000], "mxfp4", rounding="stochastic", seed=4)
    e4, _ = tn.mx_quantize(x[64000:], "mxfp4", rounding="stochastic", seed=4, offset=64000)
    np.testing.assert_array_equal(np.concatenate([e3, e4]), e1)
    e_rne, _ = tn.mx_quantize(x, "mxfp4")
    assert (e1 != e_rne).any()
