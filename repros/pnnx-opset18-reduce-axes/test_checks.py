from convkb.checks import Checks

checks = Checks(__file__)
SIGS = ["axes-ignored", "wrong-values", "reduce-not-registered"]
VARIANTS = ["mean", "mean-no-keepdim", "mean-last-axis", "mean-after-relu", "mean-dynamo", "mean-onnxsim", "sum",
            "sum-opset13", "norm", "normalize", "amax", "amin", "mean-spatial", "mean-spatial-keepdim", "mean-attr-opset17",
            "norm-opset17", "softmax"]


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], batch=True)


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def onnx_mean_opset18(s):
    """x.mean(dim=1, keepdim=True) at opset 18: ReduceMean(x, axes) with the axes as a constant input."""
    return via_pnnx(s, s.artifacts.onnx("mean-opset18"), "mean-opset18")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def onnx_sum_opset18(s):
    return via_pnnx(s, s.artifacts.onnx("sum-opset18"), "sum-opset18")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def onnx_norm_opset18(s):
    """torch.linalg.vector_norm(x, 2, dim=1) at opset 18: ReduceL2 with an axes input."""
    return via_pnnx(s, s.artifacts.onnx("norm-opset18"), "norm-opset18")


@checks.bug("pnnx", SIGS, needs=["ncnn"])
def onnx_amax_opset18(s):
    return via_pnnx(s, s.artifacts.onnx("amax-opset18"), "amax-opset18")


@checks.workaround("pnnx", "torchscript-input", needs=["ncnn"])
def torchscript_mean(s):
    return via_pnnx(s, s.artifacts.torchscript("mean-opset18"), "mean-opset18")


@checks.workaround("pnnx", "torchscript-input", needs=["ncnn"])
def torchscript_norm(s):
    return via_pnnx(s, s.artifacts.torchscript("norm-opset18"), "norm-opset18")


@checks.workaround("pnnx", "torchscript-input", needs=["ncnn"])
def torchscript_amax(s):
    return via_pnnx(s, s.artifacts.torchscript("amax-opset18"), "amax-opset18")


@checks.workaround("pnnx", "opset17", needs=["ncnn"])
def onnx_mean_opset17(s):
    return via_pnnx(s, s.artifacts.onnx("mean-opset17"), "mean-opset17")


@checks.variants("pnnx", SIGS, VARIANTS, needs=["ncnn"])
def onnx(s, case):
    """pnnx from the ONNX export, run by ncnn; compared with torch."""
    return via_pnnx(s, s.artifacts.onnx(case), case)
