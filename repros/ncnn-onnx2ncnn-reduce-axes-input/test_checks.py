from kb.checks import Checks

checks = Checks(__file__)
BUG = ["one-blob-only"]
VARIANTS = ["mean-keepdim", "mean-no-keepdim", "mean-channel", "mean-dynamo", "mean-onnxsim", "sum-opset18", "sum-opset17",
            "max-opset18", "max-keepdim-dynamo", "min-opset18", "l2-channel-opset18", "se-opset18", "pool-head-dynamo", "mean-opset17", "mean-keepdim-opset13",
            "max-opset17", "se-opset17", "pool-head-adaptive-opset18"]


@checks.variants("onnx2ncnn", BUG, VARIANTS, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
