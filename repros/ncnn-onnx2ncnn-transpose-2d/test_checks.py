from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-shape", "wrong-output"]
IN2 = ("in0", "in1")
TWO_INPUTS = {"t-matmul-opset13", "t-matmul-opset17", "t-matmul-dynamo", "t-matmul-onnxsim", "similarity"}


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_t_matmul(s):
    """x.t() @ w on 2-D inputs: onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run("t-matmul", inputs=IN2)


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_t(s):
    """x.t() alone: the Permute onnx2ncnn writes for Transpose(perm=[1, 0])."""
    return s.onnx2ncnn.run("t")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"])
def ncnn_permute_default_order(s):
    """The runtime half, keyed by the ncnn release: the Permute without an order type that onnx2ncnn a4d2ea1
    writes for x.t(), run by this ncnn."""
    return s.onnx2ncnn.run("t")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_transpose_3d(s):
    """x.transpose(1, 2) of a (1, R, C) tensor: perm [0, 2, 1], written as Permute 0=1."""
    return s.onnx2ncnn.run("transpose-3d")


@checks.workaround("onnx2ncnn", "leading-axis", needs=["ncnn"])
def onnx2ncnn_t_matmul_3d(s):
    """x.reshape(1, R, C).transpose(1, 2) @ w: the same product with a 3-D transpose."""
    return s.onnx2ncnn.run("t-matmul-3d", inputs=IN2)


# pnnx stores weights as fp16 by default; this model has no weights, so the default tolerance holds.
@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_t_matmul(s):
    """pnnx from the traced TorchScript, then the ncnn runtime."""
    return s.pnnx.to_ncnn("t-matmul", source="torchscript", inputs=IN2)


# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C: the models with a Linear can be
# ~1e-4 off torch when correct; the bug gives the wrong shape or is off by more than 0.1.
@checks.variants("onnx2ncnn", BUG, needs=["ncnn"], atol=1e-3, rtol=1e-3)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case, inputs=IN2 if case in TWO_INPUTS else ("in0",))
