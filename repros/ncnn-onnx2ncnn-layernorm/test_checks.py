from convkb.checks import Checks

checks = Checks(__file__)


@checks.bug("onnx2ncnn", ["all-nan"], needs=["ncnn"])
def onnx2ncnn_channel_ln(s):
    """The reported path: onnx2ncnn, then the ncnn runtime."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx("channel-ln"))
    return s.ncnn.run(param, bin, "channel-ln", ["in0"], ["out0"])


@checks.bug("onnx2ncnn", ["one-blob-only", "all-nan"], needs=["ncnn"])
def onnx2ncnn_channel_ln_opset18(s):
    """The same LayerNorm exported at opset 18, where ReduceMean's axes became an input."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx("channel-ln-opset18"))
    return s.ncnn.run(param, bin, "channel-ln-opset18", ["in0"], ["out0"])


@checks.bug("onnx2ncnn", ["layernormalization-not-supported", "layernormalization-not-registered"], needs=["ncnn"])
def onnx2ncnn_layernormalization(s):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx("permute-ln"))
    return s.ncnn.run(param, bin, "permute-ln", ["in0"], ["out0"])


@checks.variants("onnx2ncnn", ["all-nan", "pow-wrong-value", "layernormalization-not-supported",
                              "layernormalization-not-registered"],
                 ["v-channel-ln-opset13", "v-channel-ln-onnxsim", "v-rmsnorm-channel", "v-rmsnorm-last-axis",
                  "v-last-axis-ln-opset13", "v-last-axis-ln-onnxsim", "v-layernormalization-onnxsim",
                  "v-abs-square", "v-sigmoid-square", "v-relu-square"], needs=["ncnn"])
def onnx2ncnn_variant(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


# The runtime half, keyed by the ncnn release: the .param that onnx2ncnn a4d2ea1 writes, loaded and run by
# each ncnn release the matrix installs.


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], batch=True)


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_channel_ln(s):
    return via_pnnx(s, s.artifacts.torchscript("channel-ln"), "channel-ln")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_onnx_channel_ln(s):
    return via_pnnx(s, s.artifacts.onnx("channel-ln"), "channel-ln")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_onnx_opset18_channel_ln(s):
    """Caveat: from opset 18 ReduceMean takes its axes as an input, which this pnnx drops."""
    return via_pnnx(s, s.artifacts.onnx("channel-ln-opset18"), "channel-ln-opset18")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_permute_ln(s):
    return via_pnnx(s, s.artifacts.torchscript("permute-ln"), "permute-ln")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_onnx_permute_ln(s):
    return via_pnnx(s, s.artifacts.onnx("permute-ln"), "permute-ln")
