"""4:16 structured sparsity against a numpy reference: per group of 16, a stable argsort of
-|x| picks the 4 kept positions (ties to the lower index, NaN last), reported in index order."""
import numpy as np
import pytest

from test_numerics_reference import bits
from trnsim import numerics as tn


def ref_pack(x, keep=4, group=16):
    rows, cols = x.shape
    g = x.reshape(rows, cols // group, group)
    idx = np.sort(np.argsort(-np.abs(g), axis=-1, kind="stable")[..., :keep], axis=-1)
    vals = np.take_along_axis(g, idx, axis=-1)
    return vals.reshape(rows, -1), idx.reshape(rows, -1).astype(np.uint8)


@pytest.fixture(scope="module")
def x():
    rng = np.random.default_rng(11)
    a = rng.integers(-3, 4, (256, 512)).astype(np.float32)  # many ties
    a[:128] = rng.standard_normal((128, 512))
    a[5, ::7] = np.nan
    a[6, :16] = -0.0
    return a


@pytest.mark.parametrize("keep,group", [(4, 16), (2, 4), (1, 8)])
def test_pack_matches_numpy_argsort(x, keep, group):
    vals, idx = tn.sparse_pack(x, keep=keep, group=group)
    want_v, want_i = ref_pack(x, keep, group)
    np.testing.assert_array_equal(idx, want_i)
    np.testing.assert_array_equal(bits(vals), bits(want_v))


def test_unpack_restores_kept_values_and_zeros_elsewhere(x):
    vals, idx = tn.sparse_pack(x)
    dense = tn.sparse_unpack(vals, idx, x.shape[1])
    rows, cols = x.shape
    want = np.zeros_like(x)
    pos = (idx.reshape(rows, -1, 4) + 16 * np.arange(cols // 16)[None, :, None]).reshape(rows, -1)
    np.put_along_axis(want, pos.astype(np.int64), vals, axis=1)
    np.testing.assert_array_equal(bits(dense), bits(want))
    assert (np.count_nonzero(dense.reshape(rows, -1, 16) != 0, axis=-1) <= 4).all()


def test_shape_errors():
    with pytest.raises(tn.ShapeError, match="multiple of the group"):
        tn.sparse_pack(np.zeros((2, 20)))
    with pytest.raises(tn.ShapeError, match="2-D"):
        tn.sparse_pack(np.zeros(32))
    with pytest.raises(tn.ShapeError):
        tn.sparse_unpack(np.zeros((1, 4)), np.array([[0, 1, 1, 2]]), 16)
