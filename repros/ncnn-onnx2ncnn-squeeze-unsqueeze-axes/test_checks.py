from kb.checks import Checks

checks = Checks(__file__)
BUG = ["one-blob-only", "unsupported-squeeze-axes", "unsupported-unsqueeze-axes", "wrong-output", "wrong-shape"]


# pnnx stores the weights as fp16.


@checks.variants("onnx2ncnn", BUG, ["squeeze-opset17", "squeeze-dynamo", "squeeze-onnxsim", "squeeze-middle-opset13", "unsqueeze-opset13", "squeeze-softmax-opset11", "squeeze-transpose-opset11", "unsqueeze-softmax-opset11", "squeeze-elementwise-opset11-near-miss", "squeeze-middle-opset11-near-miss", "reshape-opset13-near-miss"], needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
