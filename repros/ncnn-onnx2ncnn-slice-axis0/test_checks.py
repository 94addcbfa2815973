from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["extract-failed", "wrong-shape", "wrong-output"]


def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_slice_2d(s):
    """Tencent/ncnn#4481's model: (x + 1)[6:9, 6:8] + 1 on a 10 x 10 tensor, onnx2ncnn then the ncnn runtime."""
    return via_onnx2ncnn(s, "slice-2d")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_slice_rows(s):
    """The first axis alone: (x + 1)[6:9] + 1."""
    return via_onnx2ncnn(s, "slice-rows")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_slice_channels(s):
    """A slice on the channel axis, the same path."""
    return via_onnx2ncnn(s, "slice-channels")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_slice_2d(s):
    """The maintainers' answer in #4481: pnnx from TorchScript."""
    return s.pnnx.to_ncnn("slice-2d", "torchscript")


@checks.variants("onnx2ncnn", BUG, ["slice-2d-opset13", "slice-2d-opset17", "slice-2d-dynamo", "slice-2d-onnxsim",
                                    "batch", "keep-first", "groups", "first-image-block", "channels-near-miss",
                                    "crop-hw-near-miss", "tokens-near-miss", "last-axis-near-miss"], needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
