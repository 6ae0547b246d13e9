"""The Python surface of trnsim.numerics: the dtype table, array handling and error types."""
import numpy as np
import pytest

import trnsim
from trnsim import numerics as tn


def test_dtypes_lists_every_format_once():
    names = [d["name"] for d in tn.dtypes()]
    assert names == ["fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp8_e3m4", "fp4_e2m1",
                     "e8m0", "int8", "mxfp8_e4m3", "mxfp8_e5m2", "mxfp4"]
    e4m3 = tn.dtype_info("float8_e4m3fn")
    assert e4m3["name"] == "fp8_e4m3" and e4m3["max_finite"] == 448 and not e4m3["has_inf"]
    assert tn.dtype_info("mxfp4")["element"] == "fp4_e2m1"
    assert tn.dtype_info("mxfp4")["block_size"] == 32
    assert tn.storage_bytes("mxfp4", 64) == 34
    assert tn.dtype_info("fp4_e2m1")["storage_bytes_per_element"] == 0.5
    assert tn.dtype_info("mxfp4")["storage_bytes_per_element"] == 0.5 + 1 / 32


def test_encode_returns_codes_of_the_format_width_and_input_shape():
    x = [[1.0, 2.0], [3.0, -1.0]]
    assert tn.encode(x, "fp32").dtype == np.uint32
    assert tn.encode(x, "bf16").dtype == np.uint16
    out = tn.encode(x, "fp8_e4m3")
    assert out.dtype == np.uint8 and out.shape == (2, 2)
    assert tn.encode(1.0, "fp16").shape == ()
    assert tn.quantize(np.ones((3, 4, 5)), "bf16").shape == (3, 4, 5)


def test_inputs_are_converted():
    x64 = np.linspace(-3, 3, 101)                     # float64
    strided = np.linspace(-3, 3, 202).astype(np.float32)[::2]
    np.testing.assert_array_equal(tn.encode(x64, "bf16"), tn.encode(x64.astype(np.float32), "bf16"))
    np.testing.assert_array_equal(tn.encode(strided, "fp16"), tn.encode(strided.copy(), "fp16"))
    np.testing.assert_array_equal(tn.decode([0x38, 0xB8], "fp8_e4m3"), [1.0, -1.0])


def test_decode_accepts_ml_dtypes_arrays_as_bit_patterns():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16)
    np.testing.assert_array_equal(tn.decode(a, "bf16"), [1.5, -2.0])


def test_errors_are_value_errors_naming_the_problem():
    assert issubclass(tn.UnsupportedError, ValueError) and issubclass(tn.ShapeError, ValueError)
    with pytest.raises(trnsim.UnsupportedError, match="unknown dtype 'fp9'"):
        tn.encode([1.0], "fp9")
    with pytest.raises(trnsim.UnsupportedError, match="block format"):
        tn.encode([1.0], "mxfp4")
    with pytest.raises(trnsim.UnsupportedError, match="rounding"):
        tn.encode([1.0], "bf16", rounding="up")
    with pytest.raises(trnsim.UnsupportedError, match="overflow"):
        tn.encode([1.0], "bf16", overflow="wrap")
    with pytest.raises(trnsim.TrnsimError, match=r"\[0, 255\]"):
        tn.decode([256], "fp8_e4m3")
    with pytest.raises(trnsim.TrnsimError, match="integers"):
        tn.decode([1.0], "fp8_e4m3")
