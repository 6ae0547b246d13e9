"""Over a million float32 values per format, encoded by trnsim and by ml_dtypes 0.6.0 (numpy for
fp16), compared bit for bit, NaN outputs included. The values mix uniform bit patterns with
neighbourhoods of every format's max finite, min normal and min subnormal (and the midpoints
around them, where rounding decides), NaNs of both signs and many payloads, infinities, zeros,
float32 subnormals and huge values."""
import numpy as np
import pytest

from test_numerics_reference import FORMATS, bits, max_finite, mismatches, ref_encode
from trnsim import numerics as tn

SEED = 20240611


def _around(values, rng, spread_bits=12, per_value=4000):
    """Float32 values whose bit patterns lie within +-2^spread_bits ulps of each given value."""
    v = np.asarray(values, dtype=np.float32)
    v = v[np.isfinite(v) & (v != 0)]
    base = np.repeat(np.abs(v).view(np.int32).astype(np.int64), per_value)
    off = rng.integers(-(1 << spread_bits), (1 << spread_bits) + 1, base.size)
    out = np.clip(base + off, 1, 0x7F7FFFFF).astype(np.uint32).view(np.float32)
    sign = rng.integers(0, 2, out.size).astype(bool)
    out[sign] = -out[sign]
    return out


@pytest.fixture(scope="module")
def samples():
    rng = np.random.default_rng(SEED)
    parts = [rng.integers(0, 1 << 32, 500_000, dtype=np.uint64).astype(np.uint32).view(np.float32)]
    boundaries = []
    for info in tn.dtypes():
        if info["block_size"] > 1:
            continue
        mx, mn, sub = info["max_finite"], info["min_normal"], info["min_subnormal"]
        ulp_at_max = mx * 2.0 ** -(info["mantissa_bits"] + 1) if info["is_float"] else 1.0
        boundaries += [mx, mx + ulp_at_max / 2, mx + ulp_at_max, mn, sub, sub / 2, 1.5 * sub,
                       mn - sub / 2, 1.0, 1.5]
    boundaries = [b for b in boundaries if b < 3.4e38]
    parts.append(_around(boundaries, rng))
    # Uniform values on a log scale from far below fp8 subnormals to far past their max.
    log_uniform = 2.0 ** rng.uniform(-30, 20, 300_000) * rng.choice([-1, 1], 300_000)
    parts.append(log_uniform.astype(np.float32))
    nan_payloads = rng.integers(1, 1 << 23, 2000, dtype=np.uint32)
    nans = np.concatenate([0x7F800000 | nan_payloads, 0xFF800000 | nan_payloads,
                           [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF]]).astype(np.uint32)
    parts.append(nans.view(np.float32))
    special = np.array([np.inf, -np.inf, 0.0, -0.0, 3.4e38, -3.4e38, 1e30, -1e30, 1e-45, -1e-45,
                        1.17549435e-38, 5.877472e-39], dtype=np.float32)
    parts.append(np.repeat(special, 100))
    fp32_subnormals = rng.integers(1, 1 << 23, 20_000, dtype=np.uint32).view(np.float32)
    parts.append(fp32_subnormals)
    x = np.concatenate(parts).astype(np.float32)
    assert x.size >= 1_000_000
    return x


@pytest.mark.parametrize("name", list(FORMATS))
def test_rne_matches_ml_dtypes(samples, name):
    got = tn.encode(samples, name)
    n, first = mismatches(got, ref_encode(samples, name), samples)
    assert n == 0, f"{name}: {n} of {samples.size} differ: {first}"


@pytest.mark.parametrize("name", list(FORMATS))
def test_saturate_matches_clip_then_convert(samples, name):
    m = max_finite(name)
    got = tn.encode(samples, name, overflow="saturate")
    want = ref_encode(np.clip(samples, -m, m), name)  # np.clip keeps NaN
    n, first = mismatches(got, want, samples)
    assert n == 0, f"{name}: {n} of {samples.size} differ: {first}"


def test_int8_matches_clip_of_rint(samples):
    with np.errstate(all="ignore"):
        want = np.clip(np.rint(samples), -128, 127)
    want = np.where(np.isnan(samples), 0, want).astype(np.int8).view(np.uint8)  # NaN -> 0
    for overflow in ("default", "saturate"):
        got = tn.encode(samples, "int8", overflow=overflow)
        n, first = mismatches(got, want, samples)
        assert n == 0, f"int8 ({overflow}): {n} differ: {first}"


def test_fp32_is_identity_or_clamps_infinities(samples):
    np.testing.assert_array_equal(tn.encode(samples, "fp32"), bits(samples))
    f32max = np.finfo(np.float32).max
    want = bits(np.clip(samples, -f32max, f32max))
    np.testing.assert_array_equal(tn.encode(samples, "fp32", overflow="saturate"), want)


@pytest.mark.parametrize("name", ["bf16", "fp16", "fp8_e4m3", "fp4_e2m1"])
def test_quantize_matches_ml_dtypes_round_trip(samples, name):
    dt = FORMATS[name][0]
    with np.errstate(all="ignore"):
        want = samples.astype(dt).astype(np.float32)
    n, first = mismatches(bits(tn.quantize(samples, name)), bits(want), samples)
    assert n == 0, f"{name}: {n} differ: {first}"
