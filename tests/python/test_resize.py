"""Resize (nearest and linear, every coordinate transformation of Resize-19 but tf_crop_and_resize) against
onnx.reference, the ONNX project's own implementation, on the simulated chip (fp32 policy:
tolerance 1e-5 relative to the output's largest magnitude; nearest selects exactly). Cubic and
the other unimplemented attributes are clear refusals that name the attribute."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import trnsim

CTMS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"]


def resize_model(x_shape, mode, ctm, scales=None, sizes=None, nearest="round_prefer_floor", axes=None, opset=19):
    inits = [numpy_helper.from_array(np.array([], np.float32), "roi")]
    inputs = ["x", "roi"]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
        inputs.append("scales")
    else:
        inputs += ["", "sizes"]
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
    attrs = dict(mode=mode, coordinate_transformation_mode=ctm, nearest_mode=nearest)
    if axes is not None:
        attrs["axes"] = axes
    node = helper.make_node("Resize", inputs, ["y"], name="rs", **attrs)
    g = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def check(model, x):
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = np.asarray(trnsim.compile_onnx(model.SerializeToString(), chip="trn2").run({"x": x})["y"])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1, 1, 2.0, 2.0], [1, 1, 0.6, 0.75], [1, 1, 1.5, 3.0]])
def test_scales_match_onnx_reference(mode, ctm, scales):
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 8)).astype(np.float32)
    check(resize_model(x.shape, mode, ctm, scales=scales), x)


@pytest.mark.parametrize("nearest", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
def test_sizes_and_axes_match_onnx_reference(nearest):
    x = np.random.default_rng(1).standard_normal((1, 2, 7, 6)).astype(np.float32)
    check(resize_model(x.shape, "nearest", "asymmetric", sizes=[11, 4], nearest=nearest, axes=[2, 3]), x)
    check(resize_model(x.shape, "linear", "half_pixel", sizes=[1, 2, 3, 13]), x)


def test_unimplemented_attributes_are_named():
    x = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(trnsim.UnsupportedError, match=r"op Resize \(attribute mode = cubic\) at node 'rs'"):
        trnsim.compile_onnx(resize_model(x.shape, "cubic", "half_pixel", scales=[1, 1, 2, 2]).SerializeToString())
    for ctm in ("tf_crop_and_resize", "tf_half_pixel_for_centers"):
        with pytest.raises(trnsim.UnsupportedError, match=f"coordinate_transformation_mode = {ctm}"):
            trnsim.compile_onnx(resize_model(x.shape, "linear", ctm, scales=[1, 1, 2, 2], opset=11).SerializeToString())


def test_bad_resizes_are_clear_errors():
    x = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(trnsim.ShapeError, match="Resize lists axis 3 twice"):
        trnsim.compile_onnx(resize_model(x.shape, "nearest", "asymmetric", sizes=[8, 8], axes=[3, -1]).SerializeToString())
    with pytest.raises(trnsim.ShapeError, match="Resize scale -2 must be positive"):
        trnsim.compile_onnx(resize_model(x.shape, "nearest", "asymmetric", scales=[1, 1, -2, 2]).SerializeToString())
    with pytest.raises(trnsim.UnsupportedError, match="interpolation matrix of more than 2"):
        trnsim.compile_onnx(resize_model(x.shape, "nearest", "asymmetric", sizes=[1, 1, 4, 10_000_000]).SerializeToString())
