from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["axes-ignored", "wrong-values", "reduce-not-registered"]
VARIANTS = ["mean", "mean-no-keepdim", "mean-last-axis", "mean-after-relu", "mean-dynamo", "mean-onnxsim", "sum",
            "sum-opset13", "norm", "normalize", "amax", "amin", "mean-spatial", "mean-spatial-keepdim", "mean-attr-opset17",
            "norm-opset17", "softmax"]


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], batch=True)


@checks.variants("pnnx", SIGS, VARIANTS, needs=["ncnn"])
def onnx(s, case):
    """pnnx from the ONNX export, run by ncnn; compared with torch."""
    return via_pnnx(s, s.artifacts.onnx(case), case)
