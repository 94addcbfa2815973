from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-values", "wrong-shape"]
TWO = dict(inputs=("in0", "in1"))


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"])
def ncnn_onnx2ncnn_matrix_plus_vector(s):
    """Tencent/ncnn#3924: [5, 2] + [2] as two inputs, converted by onnx2ncnn a4d2ea1, run by this ncnn."""
    return s.onnx2ncnn.run("add-matrix-vector", **TWO)


@checks.bug("ncnn", BUG, needs=["pnnx"])
def ncnn_pnnx_row_broadcast(s):
    """Tencent/ncnn#4508: [2, 3] + [1, 3] as two inputs, converted by pnnx from TorchScript, run by this ncnn."""
    return s.pnnx.to_ncnn("add-row", **TWO)


@checks.bug("pnnx", BUG, needs=["ncnn"])
def pnnx_row_broadcast(s):
    """Keyed by the pnnx release: what each pnnx writes for add-row, run by the installed ncnn."""
    return s.pnnx.to_ncnn("add-row", **TWO)


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_conv_plus_hw(s):
    """A [1, 3, 4, 5] conv output plus a [4, 5] constant, through onnx2ncnn."""
    return s.onnx2ncnn.run("conv-plus-hw")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_conv_plus_c11(s):
    """A per-channel [3, 1, 1] constant on the same path."""
    return s.onnx2ncnn.run("conv-plus-c11")


@checks.workaround("onnx2ncnn", "four-d-constant", needs=["ncnn"])
def onnx2ncnn_conv_plus_11hw(s):
    """The same constant stored as [1, 1, 4, 5]."""
    return s.onnx2ncnn.run("conv-plus-11hw")


# pnnx stores the conv weights as fp16: a few 1e-4 off; the bug changes the output shape.
@checks.workaround("pnnx", "pnnx", needs=["ncnn"], atol=1e-3, rtol=1e-3)
def pnnx_conv_plus_hw(s):
    """conv-plus-hw through pnnx from TorchScript, which aligns the constant's rank itself."""
    return s.pnnx.to_ncnn("conv-plus-hw")


@checks.variants("onnx2ncnn", BUG, needs=["ncnn"])
def variant(s, case):
    """onnx2ncnn, then the installed ncnn."""
    return s.onnx2ncnn.run(case)
