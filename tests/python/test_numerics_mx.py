"""OCP MX v1.0 block quantisation against an independent numpy + ml_dtypes implementation of
the spec's rule, written here: per block of 32 along the last axis,
shared_exp = floor(log2(amax)) - emax_elem (computed in float64), clamped below at -127
(so amax == 0 gives -127); a block with NaN or inf gets scale NaN (0xFF) and zero elements;
elements = convert(clip(x / 2^shared_exp, -max, max)) with RNE. Compared bit for bit."""
import ml_dtypes
import numpy as np
import pytest

from test_numerics_reference import bits
from trnsim import numerics as tn

MX = {  # name -> (element type, emax of the element, element max)
    "mxfp8_e4m3": (ml_dtypes.float8_e4m3fn, 8, 448.0),
    "mxfp8_e5m2": (ml_dtypes.float8_e5m2, 15, 57344.0),
    "mxfp4": (ml_dtypes.float4_e2m1fn, 2, 6.0),
}


def ref_mx(x, fmt):
    elem, emax, vmax = MX[fmt]
    rows, cols = x.shape
    nb = -(-cols // 32)
    xp = np.zeros((rows, nb * 32), np.float32)
    xp[:, :cols] = x  # zero padding leaves amax of the short block unchanged
    blocks = xp.reshape(rows, nb, 32)
    with np.errstate(all="ignore"):
        amax = np.max(np.abs(blocks.astype(np.float64)), axis=-1)
        shared = np.maximum(np.floor(np.log2(amax)) - emax, -127)
        bad = ~np.isfinite(amax)
        shared = np.where(bad, 0, shared)
        scale = np.exp2(shared).astype(np.float32)[..., None]
        scaled = np.clip(blocks / scale, -vmax, vmax)
        elements = scaled.astype(np.float32).astype(elem).view(np.uint8)
    elements[bad] = 0
    codes = np.where(bad, 255, shared + 127).astype(np.uint8)
    with np.errstate(all="ignore"):
        deq = elements.view(elem).astype(np.float32) * scale
    deq[bad] = np.nan
    return elements.reshape(rows, -1)[:, :cols], codes, deq.reshape(rows, -1)[:, :cols]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    rows, cols = 600, 200  # 200 = 6 full blocks + a short one of 8
    x = rng.standard_normal((rows, cols)) * np.exp2(rng.integers(-140, 125, (rows, 1)))
    x = x.astype(np.float32)
    x[0] = 0.0                                      # all-zero row
    x[1, 5], x[2, 40], x[3, 199] = np.nan, np.inf, -np.inf
    x[4] = rng.integers(-8, 9, cols)                # exact small integers, ties
    x[5, :32] = 1e-42                               # fp32 subnormals
    x[6] = np.float32(3.0e38) * rng.uniform(-1, 1, cols).astype(np.float32)
    x[7, :32] = 448.0 * 1.9                         # just under the next power of two
    return x


@pytest.mark.parametrize("fmt", list(MX))
def test_mx_matches_independent_reference(data, fmt):
    elements, scales = tn.mx_quantize(data, fmt)
    want_e, want_s, want_d = ref_mx(data, fmt)
    assert elements.shape == data.shape and scales.shape == (data.shape[0], 7)
    np.testing.assert_array_equal(scales, want_s)
    np.testing.assert_array_equal(elements, want_e)
    deq = tn.mx_dequantize(elements, scales, fmt)
    np.testing.assert_array_equal(bits(deq)[~np.isnan(want_d)], bits(want_d)[~np.isnan(want_d)])
    assert np.array_equal(np.isnan(deq), np.isnan(want_d))
    np.testing.assert_array_equal(tn.quantize(data, fmt), deq)


def test_mx_error_is_bounded_by_the_element_precision():
    # An independent bound, not a re-implementation: with scale 2^(floor(log2 amax) - 8), an
    # element |x| / scale <= 448 is off by at most half an E4M3 ulp (times the scale); above
    # 448 (the OCP rule lets amax / scale reach 512) it saturates to 448.
    x = np.random.default_rng(3).uniform(-1, 1, (100, 32)).astype(np.float32)
    q = tn.quantize(x, "mxfp8_e4m3").astype(np.float64)
    scale = np.exp2(np.floor(np.log2(np.abs(x).max(axis=1, keepdims=True))) - 8)
    r = np.abs(x) / scale
    ulp = np.exp2(np.floor(np.log2(np.maximum(r, 2.0 ** -6))) - 3) * scale
    inside = r <= 448
    assert np.all((np.abs(q - x) <= ulp / 2)[inside])
    np.testing.assert_array_equal(q[~inside], (np.sign(x) * 448 * scale)[~inside])
    assert (~inside).any()


def test_mx_shape_errors():
    with pytest.raises(tn.ShapeError):
        tn.mx_dequantize(np.zeros((2, 64), np.uint8), np.zeros((2, 1), np.uint8), "mxfp4")
    with pytest.raises(tn.UnsupportedError):
        tn.mx_quantize(np.zeros(32), "fp8_e4m3")


# ---- the MX instructions on a simulated Trainium3 (QuantizeMX, then TensorE's MX matmul) ----

@pytest.mark.parametrize("a_fmt, x_fmt", [("mxfp8_e4m3", "mxfp4"), ("mxfp8_e5m2", "mxfp8_e4m3")])
def test_mx_matmul_instruction_matches_ml_dtypes_and_fp64(a_fmt, x_fmt):
    """A [K, M] and X [K, N] (K = 100 on the partitions: three blocks of 32 and a short one) are
    quantised by QuantizeMX along K and multiplied by matmul_mx into fp32 PSUM. The codes and
    scales must equal ref_mx's bit for bit (read back as values); the product must equal the
    float64 product of ref_mx's dequantised values within fp32 accumulation: K ulps of sum|a x|."""
    import trnsim
    K, M, N = 100, 64, 80
    elem = {"mxfp8_e4m3": "fp8_e4m3", "mxfp8_e5m2": "fp8_e5m2", "mxfp4": "fp4_e2m1"}
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((K, M)) * np.exp2(rng.integers(-4, 5, (1, M)))).astype(np.float32)
    x = rng.standard_normal((K, N)).astype(np.float32)
    kb = trnsim.KernelBuilder("trn3")
    ha, hx = kb.hbm_input("a", [K, M], "fp32"), kb.hbm_input("x", [K, N], "fp32")
    out, a_codes = kb.hbm_output("out", [M, N], "fp32"), kb.hbm_output("a_codes", [K, M], "fp32")
    a_scales = kb.hbm_output("a_scales", [4, M], "fp32")
    ta, tx = kb.sbuf_tile([K, M], "fp32"), kb.sbuf_tile([K, N], "fp32")
    ca, sa = kb.sbuf_tile([K, M], elem[a_fmt]), kb.sbuf_tile([4, M], "e8m0")
    cx, sx = kb.sbuf_tile([K, N], elem[x_fmt]), kb.sbuf_tile([4, N], "e8m0")
    ps = kb.psum_tile([M, N], "fp32")
    res = kb.sbuf_tile([M, N], "fp32")
    kb.load(ta, ha[0:K, :])
    kb.load(tx, hx[0:K, :])
    kb.quantize_mx(ca, sa, ta)
    kb.quantize_mx(cx, sx, tx)
    kb.matmul_mx(ps, ca, sa, cx, sx)
    kb.copy(res, ps)
    kb.store(out[0:M, :], res)
    kb.store(a_codes[0:K, :], ca)
    kb.store(a_scales[0:4, :], sa)
    got = trnsim.run(kb.build(), inputs={"a": a, "x": x})["outputs"]
    ea, sca, da = ref_mx(np.ascontiguousarray(a.T), a_fmt)   # blocks along K: the last axis of A^T
    _, _, dx = ref_mx(np.ascontiguousarray(x.T), x_fmt)
    el = MX[a_fmt][0]
    np.testing.assert_array_equal(np.asarray(got["a_codes"]).T, ea.view(el).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(got["a_scales"]).T, np.exp2(sca.astype(np.float64) - 127))
    want = da.astype(np.float64) @ dx.astype(np.float64).T
    mag = np.abs(da.astype(np.float64)) @ np.abs(dx.astype(np.float64)).T
    assert np.all(np.abs(np.asarray(got["out"]) - want) <= K * 2.0**-24 * mag + 1e-30)


def test_mx_matmul_refused_on_a_chip_without_mx():
    import trnsim
    kb = trnsim.KernelBuilder("trn2")
    with pytest.raises(trnsim.UnsupportedError, match="trn2 has no MX matmul"):
        kb.quantize_mx(kb.sbuf_tile([32, 8], "fp8_e4m3"), kb.sbuf_tile([1, 8], "e8m0"), kb.sbuf_tile([32, 8], "fp32"))
