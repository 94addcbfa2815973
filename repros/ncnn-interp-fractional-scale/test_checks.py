from kb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-values"]
# pnnx stores conv weights as fp16 (the neck variant): up to 1.1e-4 off; the bug is off by 0.1 or more.
TOL = dict(atol=1e-3, rtol=1e-3)


@checks.variants("ncnn", BUG, needs=["pnnx"], **TOL)
def pnnx(s, case):
    """pnnx, then this ncnn: from the ONNX file for the variants about the export (opset 17, dynamo,
    onnx-simplifier), from TorchScript for the others."""
    onnx = any(k in case for k in ("opset17", "dynamo", "onnxsim"))
    return s.pnnx.to_ncnn(case, source="onnx" if onnx else "torchscript")
