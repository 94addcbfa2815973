from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["instancenorm1d-not-registered", "wrong-output"]
# pnnx stores conv weights as fp16 by default (fp16=1): the feature encoder, whose two convs have no norm after
# the second, differs from torch by a few 1e-4 when converted correctly. The failure is a file ncnn cannot load.
TOL = dict(atol=2e-3, rtol=1e-3)


def via_pnnx(s, source, case, **kw):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], **kw)


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def onnx_groupnorm_cc(s):
    """nn.GroupNorm(8, 8) on a (1, 8, 30) tensor, pnnx from the ONNX export (opset 17)."""
    return via_pnnx(s, s.artifacts.onnx("groupnorm-cc"), "groupnorm-cc")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def onnx_feature_encoder(s):
    """wav2vec2's first feature-encoder layer (Conv1d, GroupNorm(16, 16), GELU) on a 400-sample waveform, from ONNX."""
    return via_pnnx(s, s.artifacts.onnx("feature-encoder"), "feature-encoder")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def onnx_conv_instancenorm1d(s):
    """nn.InstanceNorm1d(8, affine=True) after a Conv1d, from ONNX."""
    return via_pnnx(s, s.artifacts.onnx("conv-instancenorm1d"), "conv-instancenorm1d")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def torchscript_conv_instancenorm1d(s):
    """The same, from TorchScript."""
    return via_pnnx(s, s.artifacts.torchscript("conv-instancenorm1d"), "conv-instancenorm1d")


@checks.control("pnnx", needs=["ncnn"], **TOL)
def onnx_groupnorm_cc_4d(s):
    """The same GroupNorm(8, 8) on a 4-D tensor, from ONNX."""
    return via_pnnx(s, s.artifacts.onnx("groupnorm-cc-4d"), "groupnorm-cc-4d")


@checks.workaround("pnnx", "torchscript-input", needs=["ncnn"], **TOL)
def torchscript_groupnorm_cc(s):
    return via_pnnx(s, s.artifacts.torchscript("groupnorm-cc"), "groupnorm-cc")


@checks.workaround("pnnx", "torchscript-input", needs=["ncnn"], **TOL)
def torchscript_feature_encoder(s):
    return via_pnnx(s, s.artifacts.torchscript("feature-encoder"), "feature-encoder")


@checks.workaround("pnnx", "unsqueeze-to-4d", needs=["ncnn"], **TOL)
def onnx_groupnorm_cc_unsqueezed(s):
    """GroupNorm applied to x.unsqueeze(-1) and squeezed back, the same weights, from ONNX; judged against the
    original's torch output."""
    return via_pnnx(s, s.artifacts.onnx("groupnorm-cc-unsqueezed"), "groupnorm-cc-unsqueezed")


VARIANTS = ["groupnorm-cc-opset13", "groupnorm-cc-opset18", "groupnorm-cc-dynamo", "groupnorm-cc-onnxsim",
            "feature-encoder-opset17", "feature-encoder-dynamo", "conv-instancenorm1d-opset13",
            "groupnorm-cc-4d-near-miss", "instancenorm2d-near-miss", "layernorm-3d-near-miss",
            "groupnorm-2-groups-3d-near-miss", "groupnorm-1-group-3d-dynamo-near-miss", "conv-groupnorm-1-group-near-miss",
            "groupnorm-cc-4d-dynamo-near-miss"]


@checks.variants("pnnx", BUG, VARIANTS, needs=["ncnn"], **TOL)
def onnx(s, case):
    """pnnx from the ONNX export, run by ncnn as pnnx's script feeds it."""
    return via_pnnx(s, s.artifacts.onnx(case), case)
