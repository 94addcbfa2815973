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


# pnnx stores the conv weights as fp16: a few 1e-4 off; the bug changes the output shape.
