from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-output"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_softmax_3d(s):
    """torch.softmax(x, dim=-1) on (1, 4, 5) at opset 13: onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run("softmax-3d")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_attention_probs(s):
    """softmax(scores * scale, dim=-1) on (1, heads, tokens, tokens) attention scores."""
    return s.onnx2ncnn.run("attention-probs")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"])
def ncnn_softmax_axis_minus_2(s):
    """The runtime half, keyed by the ncnn release: the 'Softmax 0=-2' that onnx2ncnn a4d2ea1 writes for
    softmax(dim=-1) on (1, 4, 5), run by this ncnn."""
    return s.onnx2ncnn.run("softmax-3d")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_classifier(s):
    """A classifier head, Linear then softmax(dim=-1) over (1, 10): also written 0=-2, on a 1-D blob."""
    return s.onnx2ncnn.run("classifier")


@checks.workaround("onnx2ncnn", "positive-dim", needs=["ncnn"])
def onnx2ncnn_positive_dim(s):
    """softmax(x, dim=2), the last dim spelled positively: Softmax(axis=2), written 0=1."""
    return s.onnx2ncnn.run("positive-dim")


@checks.workaround("onnx2ncnn", "opset11", needs=["ncnn"])
def onnx2ncnn_opset11(s):
    """The same softmax(dim=-1) exported with opset_version=11: torch writes Softmax(axis=2)."""
    return s.onnx2ncnn.run("opset11")


# pnnx stores weights as fp16 by default; this model has no weights, so the default tolerance holds.
@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_softmax_3d(s):
    """pnnx from the traced TorchScript, then the ncnn runtime."""
    return s.pnnx.to_ncnn("softmax-3d", source="torchscript")


# ncnn's x86 InnerProduct and Convolution may keep weights in fp16 (F16C): the models with Linear or Conv1d
# layers can be ~1e-4 off torch when correct; the bug is off by more than 0.1.
@checks.variants("onnx2ncnn", BUG, needs=["ncnn"], atol=1e-3, rtol=1e-3)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
