from kb.checks import Checks

checks = Checks(__file__)
BUG = ["quantize-not-supported", "qlinear-not-supported", "converter-abort", "quant-layer-not-registered"]
# The quantized model is compared with torch's float outputs: int8 rounding is allowed 10% of the range.
QTOL = dict(range_tol=0.1)


def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


@checks.variants("onnx2ncnn", BUG, ["qdq-opset13", "qdq-opset17", "qdq-dynamo", "qdq-onnxsim", "qdq-per-channel",
                                    "qdq-mlp", "qoperator", "dynamic-mlp", "float-near-miss", "float-mlp-near-miss"],
                 needs=["ncnn"], **QTOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
