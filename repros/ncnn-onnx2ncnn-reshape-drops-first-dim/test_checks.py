from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-shape"]


# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C: a correct Linear is up to ~6e-4 off
# torch here; the bug is off by more than 1.
@checks.bug("onnx2ncnn", BUG, needs=["ncnn"], atol=1e-3, rtol=1e-3)
def onnx2ncnn_tokens_linear(s):
    """(1, 6, 8) tokens reshaped to (6, 8), a Linear, reshaped back: onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run("tokens-linear")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_reshape_3d(s):
    """x.reshape(2, 3, 4) of a (1, 6, 4) tensor."""
    return s.onnx2ncnn.run("reshape-3d")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"])
def ncnn_reshape_without_first_dim(s):
    """The runtime half, keyed by the ncnn release: the 'Reshape 0=4 1=3' that onnx2ncnn a4d2ea1 writes for
    reshape(2, 3, 4), run by this ncnn."""
    return s.onnx2ncnn.run("reshape-3d")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_head_split(s):
    """The multi-head split reshape(1, 6, 2, 4): a target that keeps the leading 1."""
    return s.onnx2ncnn.run("head-split")


@checks.workaround("onnx2ncnn", "linear-3d", needs=["ncnn"], atol=1e-3, rtol=1e-3)  # fp16 weights: see above
def onnx2ncnn_linear_3d(s):
    """The same Linear on the (1, 6, 8) tokens, without the reshapes (and without onnx-simplifier)."""
    return s.onnx2ncnn.run("linear-3d")


@checks.workaround("onnx2ncnn", "keep-leading-1", needs=["ncnn"])
def onnx2ncnn_keep_leading_1(s):
    """reshape(1, 2, 3, 4) instead of reshape(2, 3, 4): the leading 1 is what onnx2ncnn drops."""
    return s.onnx2ncnn.run("keep-leading-1")


# pnnx stores weights as fp16 by default: a correct result is ~1e-3 off torch.
@checks.workaround("pnnx", "pnnx", needs=["ncnn"], atol=5e-3, rtol=5e-3)
def pnnx_torchscript_tokens_linear(s):
    """pnnx from the traced TorchScript, then the ncnn runtime."""
    return s.pnnx.to_ncnn("tokens-linear", source="torchscript")


# fp16 InnerProduct weights (see above) in the variants with a Linear.
@checks.variants("onnx2ncnn", BUG, needs=["ncnn"], atol=1e-3, rtol=1e-3)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
