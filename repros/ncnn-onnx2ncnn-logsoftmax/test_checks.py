from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["logsoftmax-not-supported", "logsoftmax-not-registered"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_log_softmax(s):
    """F.log_softmax over the class axis after a 1x1 conv: onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run("log-softmax")


@checks.workaround("onnx2ncnn", "log-of-softmax", needs=["ncnn"])
def onnx2ncnn_log_of_softmax(s):
    """torch.log(F.softmax(y, 1)): Softmax and a log UnaryOp, which onnx2ncnn converts."""
    return s.onnx2ncnn.run("log-of-softmax")


# pnnx stores weights as fp16 by default: 4.3e-4 off torch on pnnx 20261020 (a correct result; the bug gives no output).
@checks.workaround("pnnx", "pnnx", needs=["ncnn"], atol=1e-3)
def pnnx_torchscript_log_softmax(s):
    """pnnx from the traced TorchScript, then the ncnn runtime."""
    return s.pnnx.to_ncnn("log-softmax", source="torchscript")


@checks.variants("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
