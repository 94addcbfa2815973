from kb.checks import Checks

checks = Checks(__file__)
BUG = ["extract-failed", "wrong-shape", "wrong-output"]


def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


@checks.variants("onnx2ncnn", BUG, ["slice-2d-opset13", "slice-2d-opset17", "slice-2d-dynamo", "slice-2d-onnxsim",
                                    "batch", "keep-first", "groups", "first-image-block", "channels-near-miss",
                                    "crop-hw-near-miss", "tokens-near-miss", "last-axis-near-miss"], needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
