from kb.checks import Checks

checks = Checks(__file__)

# What onnx2ncnn writes for channel-ln (tools/onnx/onnx2ncnn.cpp: Pow with a constant exponent becomes
# BinaryOp op_type=6 with a scalar b). The affine Mul/Add are left out: the model's weight is 1, bias 0.
CHANNEL_LN_AS_ONNX2NCNN_WRITES_IT = """
7767517
10 12
Input            in0                      0 1 in0
Split            split0                   1 2 in0 in0_0 in0_1
Reduction        /ReduceMean              1 1 in0_1 mean 0=3 1=0 -23303=1,0 4=1 5=1
BinaryOp         /Sub                     2 1 in0_0 mean sub 0=1
Split            split1                   1 2 sub sub_0 sub_1
BinaryOp         /Pow                     1 1 sub_1 pow 0=6 1=1 2=2.000000e+00
Reduction        /ReduceMean_1            1 1 pow var 0=3 1=0 -23303=1,0 4=1 5=1
BinaryOp         /Add                     1 1 var var_eps 0=0 1=1 2=1.000000e-06
UnaryOp          /Sqrt                    1 1 var_eps std 0=5
BinaryOp         /Div                     2 1 sub_0 std out0 0=3
"""

# The same Pow on its own, to see the wrong value before it turns into NaN.
CENTERED_SQUARE_AS_ONNX2NCNN_WRITES_IT = """
7767517
5 6
Input            in0                      0 1 in0
Split            split0                   1 2 in0 in0_0 in0_1
Reduction        /ReduceMean              1 1 in0_1 mean 0=3 1=0 -23303=1,0 4=1 5=1
BinaryOp         /Sub                     2 1 in0_0 mean sub 0=1
BinaryOp         /Pow                     1 1 sub out0 0=6 1=1 2=2.000000e+00
"""

# What onnx2ncnn writes for permute-ln: it has no LayerNormalization rule and passes the op name through.
PERMUTE_LN_AS_ONNX2NCNN_WRITES_IT = """
7767517
4 4
Input              in0                      0 1 in0
Permute            /Transpose               1 1 in0 t0 0=3
LayerNormalization /ln/LayerNormalization   1 1 t0 ln0
Permute            /Transpose_1             1 1 ln0 out0 0=4
"""


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


@checks.bug("ncnn", ["all-nan"])
def ncnn_pow_negative_base(s):
    """The runtime half, with the pip ncnn alone: the layers onnx2ncnn writes for channel-ln."""
    param = s.ncnn.write_param("channel-ln.param", CHANNEL_LN_AS_ONNX2NCNN_WRITES_IT)
    return s.ncnn.run(param, None, "channel-ln", ["in0"], ["out0"])


@checks.bug("ncnn", ["all-nan", "pow-wrong-value"])
def ncnn_pow_alone(s):
    """The pow step alone: (x - mean) ** 2 through BinaryOp op_type=6 with a scalar exponent."""
    param = s.ncnn.write_param("centered-square.param", CENTERED_SQUARE_AS_ONNX2NCNN_WRITES_IT)
    return s.ncnn.run(param, None, "centered-square", ["in0"], ["out0"])


@checks.bug("ncnn", ["layernormalization-not-registered"])
def ncnn_loads_layernormalization(s):
    param = s.ncnn.write_param("permute-ln.param", PERMUTE_LN_AS_ONNX2NCNN_WRITES_IT)
    return s.ncnn.run(param, None, "permute-ln", ["in0"], ["out0"])


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

