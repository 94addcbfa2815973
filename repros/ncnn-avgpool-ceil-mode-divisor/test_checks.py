from kb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-border"]
# pnnx stores the block variant's conv weights as fp16 (a few 1e-4 off); the bug is off by 0.5 or more.
TOL = dict(atol=1e-3, rtol=1e-3)


@checks.variants("ncnn", BUG, needs=["pnnx", "onnx2ncnn"], **TOL)
def variant(s, case):
    """onnx2ncnn for the variants about the export (opset 17, dynamo, onnx-simplifier), pnnx from
    TorchScript for the others; then this ncnn."""
    if any(k in case for k in ("opset17", "dynamo", "onnxsim")):
        return s.onnx2ncnn.run(case)
    return s.pnnx.to_ncnn(case)
