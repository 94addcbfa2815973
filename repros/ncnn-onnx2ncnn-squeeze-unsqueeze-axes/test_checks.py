from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["one-blob-only", "unsupported-squeeze-axes", "unsupported-unsqueeze-axes", "wrong-output", "wrong-shape"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_squeeze_opset13(s):
    """onnx2ncnn, then the ncnn runtime: squeeze(0) and softmax(dim=0), exported at opset 13."""
    return s.onnx2ncnn.run("squeeze-opset13")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_squeeze_opset11(s):
    """The same head exported at opset 11, where Squeeze's axes are an attribute."""
    return s.onnx2ncnn.run("squeeze-opset11")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_no_squeeze_opset11(s):
    """The head without the Squeeze (softmax over dim 1 of the batched tensor), at opset 11."""
    return s.onnx2ncnn.run("no-squeeze-opset11")


@checks.workaround("onnx2ncnn", "keep-batch-axis", needs=["ncnn"])
def onnx2ncnn_keep_batch_axis(s):
    """softmax(dim=1) on the batched tensor, no Squeeze, at opset 13: judged against squeeze-opset13's output."""
    return s.onnx2ncnn.run("keep-batch-axis")


# pnnx stores the weights as fp16.
@checks.workaround("pnnx", "pnnx", needs=["ncnn"], atol=1e-3, rtol=1e-3)
def pnnx_torchscript_squeeze(s):
    """pnnx from TorchScript on the opset-13 model's module."""
    return s.pnnx.to_ncnn("squeeze-opset13", source="torchscript")


@checks.variants("onnx2ncnn", BUG, ["squeeze-opset17", "squeeze-dynamo", "squeeze-onnxsim", "squeeze-middle-opset13", "unsqueeze-opset13", "squeeze-softmax-opset11", "squeeze-transpose-opset11", "unsqueeze-softmax-opset11", "squeeze-elementwise-opset11-near-miss", "squeeze-middle-opset11-near-miss", "reshape-opset13-near-miss"], needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
