from kb.checks import Checks

checks = Checks(__file__)
BUG = ["nan-output", "wrong-output"]
# ncnn's x86 InnerProduct keeps its weights in fp16 where the CPU has F16C: a correct result differs from
# torch by a few 1e-4 (the tokens near miss shows it), the bug by orders of magnitude more.
TOL = dict(atol=2e-3, rtol=2e-3)


C = 8
# What onnx2ncnn writes for permute-linear (tools/onnx/onnx2ncnn.cpp: a MatMul with a constant 2-D weight
# becomes InnerProduct 0=num_output 1=bias_term 2=weight_data_size).
PERMUTE_LINEAR_AS_ONNX2NCNN_WRITES_IT = f"""
7767517
3 3
Input            in0                      0 1 in0
Permute          /Transpose               1 1 in0 t0 0=3
InnerProduct     /fc/MatMul               1 1 t0 out0 0={C} 1=1 2={C * C}
"""


def permute_linear_bin(path):
    """The Linear of repro.PermuteLinear in ncnn's .bin layout: a 0 tag (fp32), weight (out x in), bias."""
    import struct

    import numpy as np

    w = ((np.arange(C * C) % 7 - 3) / 10).astype(np.float32)
    b = (np.arange(C) / 10).astype(np.float32)
    path.write_bytes(struct.pack("<I", 0) + w.tobytes() + b.tobytes())
    return path


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


@checks.bug("ncnn", BUG, **TOL)
def ncnn_innerproduct_on_3d_blob(s):
    """The runtime half, with the pip ncnn alone: the Permute + InnerProduct onnx2ncnn writes for permute-linear."""
    param = s.ncnn.write_param("permute-linear.param", PERMUTE_LINEAR_AS_ONNX2NCNN_WRITES_IT)
    bin = permute_linear_bin(s.path("permute-linear.bin"))
    return s.ncnn.run(param, bin, "permute-linear", ["in0"], ["out0"])


@checks.workaround("onnx2ncnn", "conv1x1", needs=["ncnn"], **TOL)
def onnx2ncnn_conv1x1_mlp(s):
    """The same MLP written as 1x1 convolutions on NCHW, through onnx2ncnn."""
    return via_onnx2ncnn(s, "conv1x1-mlp")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], atol=2e-3, rtol=2e-3)
def pnnx_torchscript_convnext_mlp(s):
    """pnnx from TorchScript (its fp16 weight storage explains differences of a few 1e-4)."""
    param, bin = s.pnnx.convert(s.artifacts.torchscript("convnext-mlp"), "convnext-mlp")
    return s.ncnn.run(param, bin, "convnext-mlp", ["in0"], ["out0"])


@checks.workaround("pnnx", "pnnx", needs=["ncnn"], atol=2e-3, rtol=2e-3)
def pnnx_onnx_convnext_mlp(s):
    param, bin = s.pnnx.convert(s.artifacts.onnx("convnext-mlp"), "convnext-mlp")
    return s.ncnn.run(param, bin, "convnext-mlp", ["in0"], ["out0"])


@checks.variants("onnx2ncnn", BUG, ["mlp-opset13", "mlp-opset17", "layer-scale", "single-linear-dynamo", "single-linear",
                                    "relu-before-linear", "layernorm-before-linear", "no-permute-back", "tokens-near-miss", "head-near-miss",
                                    "conv1x1-near-miss"], needs=["ncnn"], **TOL)
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
