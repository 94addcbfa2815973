from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-alpha"]
VARIANTS = ["hardswish-opset14", "hardswish-opset17", "hardswish-opset18", "hardswish-opset17-onnxsim",
            "functional-hardswish-dynamo", "mbv3-block-opset17", "mbv3-block-opset18", "hardswish-opset13-near-miss",
            "hardswish-opset13-onnxsim-near-miss", "mbv3-block-opset13-near-miss", "hardsigmoid-mul-near-miss",
            "hardsigmoid-near-miss", "manual-hardswish-near-miss"]


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_hardswish_dynamo(s):
    """nn.Hardswish as torch 2.13 exports it by default (dynamo, opset 18: one HardSwish op), onnx2ncnn, ncnn."""
    return s.onnx2ncnn.run("hardswish-dynamo")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_mbv3_block_dynamo(s):
    """A MobileNetV3 inverted residual block with two hardswish activations, default dynamo export."""
    return s.onnx2ncnn.run("mbv3-block-dynamo")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_hardsigmoid_dynamo(s):
    """nn.Hardsigmoid, default dynamo export: a HardSigmoid op with alpha=1/6 written out."""
    return s.onnx2ncnn.run("hardsigmoid-dynamo")


@checks.workaround("onnx2ncnn", "opset13", needs=["ncnn"])
def onnx2ncnn_hardswish_opset13(s):
    """The same nn.Hardswish exported with dynamo=False at opset 13; judged against hardswish-dynamo."""
    return s.onnx2ncnn.run("hardswish-opset13")


@checks.workaround("onnx2ncnn", "manual-hardswish", needs=["ncnn"])
def onnx2ncnn_mbv3_block_manual_dynamo(s):
    """The same block with x * relu6(x + 3) / 6 for the activation, default dynamo export; judged against
    mbv3-block-dynamo."""
    return s.onnx2ncnn.run("mbv3-block-manual-dynamo")


@checks.variants("onnx2ncnn", BUG, VARIANTS, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
