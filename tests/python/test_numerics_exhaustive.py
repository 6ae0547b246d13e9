"""Every code of every element format, decoded and re-encoded, against ml_dtypes 0.6.0
(numpy for fp16). Comparison is bit for bit on float32 patterns: a NaN must come out as
exactly the NaN ml_dtypes produces (sign and payload), not merely as some NaN."""
import numpy as np
import pytest

from test_numerics_reference import FORMATS, all_codes, bits, mismatches, ref_decode, ref_encode
from trnsim import numerics as tn


@pytest.mark.parametrize("name", list(FORMATS))
def test_decode_every_code_matches_ml_dtypes(name):
    codes = all_codes(name)
    got = tn.decode(codes, name)
    assert got.dtype == np.float32
    n, first = mismatches(bits(got), bits(ref_decode(codes, name)))
    assert n == 0, f"{name}: {n} decode mismatches: {first}"


@pytest.mark.parametrize("name", list(FORMATS))
def test_encode_of_every_decoded_code_round_trips(name):
    codes = all_codes(name)
    values = ref_decode(codes, name)
    got = tn.encode(values, name)
    assert got.dtype == codes.dtype
    n, first = mismatches(got, ref_encode(values, name), values)
    assert n == 0, f"{name}: {n} mismatches with ml_dtypes: {first}"
    # Every non-NaN code is its own image; NaN codes go to the format's canonical NaN
    # (fp16 keeps NaN payloads, so there every code round-trips).
    keep = ~np.isnan(values)
    n, first = mismatches(got[keep], codes[keep], values[keep])
    assert n == 0, f"{name}: {n} codes do not round-trip: {first}"


@pytest.mark.parametrize("name", ["fp8_e4m3", "fp8_e5m2", "fp8_e3m4", "fp4_e2m1", "int8"])
def test_quantize_of_decoded_codes_is_identity(name):
    codes = np.arange(16 if name == "fp4_e2m1" else 256, dtype=np.uint8)
    values = tn.decode(codes, name)
    keep = ~np.isnan(values)
    np.testing.assert_array_equal(bits(tn.quantize(values, name))[keep], bits(values)[keep])


def test_int8_decode_is_twos_complement():
    codes = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(tn.decode(codes, "int8"), codes.view(np.int8).astype(np.float32))
