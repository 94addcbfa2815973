from kb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-alpha"]
VARIANTS = ["hardswish-opset14", "hardswish-opset17", "hardswish-opset18", "hardswish-opset17-onnxsim",
            "functional-hardswish-dynamo", "mbv3-block-opset17", "mbv3-block-opset18", "hardswish-opset13-near-miss",
            "hardswish-opset13-onnxsim-near-miss", "mbv3-block-opset13-near-miss", "hardsigmoid-mul-near-miss",
            "hardsigmoid-near-miss", "manual-hardswish-near-miss"]


@checks.variants("onnx2ncnn", BUG, VARIANTS, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
