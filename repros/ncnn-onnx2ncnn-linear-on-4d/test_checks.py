from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-shape", "nan-output", "wrong-output"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C: a correct result differs from
# torch by up to 9.2e-4 (measured on the tokens near miss), the bug by orders of magnitude more.
TOL = dict(atol=1e-3, rtol=1e-3)


def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"], **TOL)
def onnx2ncnn_convnext_mlp(s):
    """onnx2ncnn, then the ncnn runtime, on ConvNeXt's channels-last MLP."""
    return via_onnx2ncnn(s, "convnext-mlp")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"], **TOL)
def onnx2ncnn_permute_linear(s):
    """The smallest case: permute to channels last, one Linear."""
    return via_onnx2ncnn(s, "permute-linear")


@checks.bug("ncnn", BUG, needs=["onnx2ncnn"], **TOL)
def ncnn_innerproduct_on_3d_blob(s):
    """The runtime half, keyed by the ncnn release: the Permute + InnerProduct that onnx2ncnn a4d2ea1 writes
    for permute-linear, run by this ncnn."""
    return via_onnx2ncnn(s, "permute-linear")


@checks.workaround("onnx2ncnn", "conv1x1", needs=["ncnn"])
def onnx2ncnn_conv1x1_mlp(s):
    """The same MLP written as 1x1 convolutions on NCHW, through onnx2ncnn."""
    return via_onnx2ncnn(s, "conv1x1-mlp")


# pnnx stores the weights as fp16: measured up to 3.8e-4 abs over pnnx 20240226 to 20261020.
@checks.workaround("pnnx", "pnnx", needs=["ncnn"], atol=1e-3, rtol=1e-3)
def pnnx_torchscript_convnext_mlp(s):
    """pnnx from TorchScript (its fp16 weight storage explains differences of a few 1e-4)."""
    param, bin = s.pnnx.convert(s.artifacts.torchscript("convnext-mlp"), "convnext-mlp")
    return s.ncnn.run(param, bin, "convnext-mlp", ["in0"], ["out0"])


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], atol=1e-3, rtol=1e-3)  # as above: fp16 weights
def pnnx_onnx_convnext_mlp(s):
    param, bin = s.pnnx.convert(s.artifacts.onnx("convnext-mlp"), "convnext-mlp")
    return s.ncnn.run(param, bin, "convnext-mlp", ["in0"], ["out0"])


@checks.variants("onnx2ncnn", BUG, ["mlp-opset13", "mlp-opset17", "layer-scale", "single-linear-dynamo", "single-linear",
                                    "relu-before-linear", "layernorm-before-linear", "no-permute-back", "tokens-near-miss", "head-near-miss",
                                    "conv1x1-near-miss"], needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
