from kb.checks import Checks

checks = Checks(__file__)


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
