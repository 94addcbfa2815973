from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-values"]
# pnnx stores conv weights as fp16 (the neck variant): up to 1.1e-4 off; the bug is off by 0.1 or more.
TOL = dict(atol=1e-3, rtol=1e-3)


@checks.bug("ncnn", BUG, needs=["pnnx"], **TOL)
def ncnn_bilinear_1p5(s):
    """F.interpolate(scale_factor=1.5, mode="bilinear") on a 7x7 map, converted by pnnx from TorchScript."""
    return s.pnnx.to_ncnn("bilinear-1p5")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"], **TOL)
def ncnn_onnx2ncnn_bilinear_1p5(s):
    """The same through onnx2ncnn a4d2ea1 (ONNX Resize with scales), keyed by the ncnn release."""
    return s.onnx2ncnn.run("bilinear-1p5")


@checks.workaround("ncnn", "matrix-resize", needs=["pnnx"], **TOL)
def ncnn_matrix_1p5(s):
    """bilinear-1p5 rewritten as two constant matrix products, through pnnx from TorchScript."""
    return s.pnnx.to_ncnn("matrix-1p5")


@checks.variants("ncnn", BUG, needs=["pnnx"], **TOL)
def pnnx(s, case):
    """pnnx, then this ncnn: from the ONNX file for the variants about the export (opset 17, dynamo,
    onnx-simplifier), from TorchScript for the others."""
    onnx = any(k in case for k in ("opset17", "dynamo", "onnxsim"))
    return s.pnnx.to_ncnn(case, source="onnx" if onnx else "torchscript")
