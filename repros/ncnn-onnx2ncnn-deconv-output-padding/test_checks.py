from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["extract-failed", "output-shape-ignored"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_output_shape(s):
    """onnx2ncnn, then the ncnn runtime, on a stride-2 ConvTranspose that states output_shape (4x4 kernel, 8x8 -> 16x16)."""
    return s.onnx2ncnn.run("output-shape")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"])
def ncnn_deconv_output_shape(s):
    """The runtime half, keyed by the ncnn release: the Deconvolution (20=16 21=16, no pads) onnx2ncnn a4d2ea1
    writes for output-shape, run by this ncnn."""
    return s.onnx2ncnn.run("output-shape")


@checks.workaround("onnx2ncnn", "explicit-pads", needs=["ncnn"])
def onnx2ncnn_explicit_pads(s):
    """The same layer exported the torch way (padding=1) instead of with output_shape."""
    return s.onnx2ncnn.run("explicit-pads")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_output_padding(s):
    """Tencent/ncnn#1053's layer: ConvTranspose2d(3, stride 2, padding 1, output_padding 1) from torch."""
    return s.onnx2ncnn.run("output-padding")


@checks.variants("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
