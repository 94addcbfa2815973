from convkb.checks import Checks

checks = Checks(__file__)
# The measurement first (a wrong output), then the lines that explain a failed step.
BUG = ["wrong-output", "pad-not-registered", "five-d-input", "padding-mode-unsupported"]
# pnnx stores conv weights as fp16 by default (fp16=1): a correct conversion differs from torch by a few 1e-4,
# and by up to 1.3e-3 in the ResNet block, where InstanceNorm scales the fp16 error up (pnnx 20240715 to 20250427).
# The failures measured are orders larger (0.94) or a file ncnn cannot load.
TOL = dict(atol=3e-3, rtol=1e-3)


def via_pnnx(s, source, case, **kw):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], **kw)


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def torchscript_pad_reflect_value0(s):
    """Tencent/ncnn#5025: F.pad(mode="reflect", value=0) before a Conv1d, pnnx from TorchScript."""
    return via_pnnx(s, s.artifacts.torchscript("pad-reflect-value0"), "pad-reflect-value0")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def torchscript_reflpad3d(s):
    """nn.ReflectionPad3d on a 5-D tensor, pnnx from TorchScript, run as pnnx's own *_ncnn.py feeds it."""
    return via_pnnx(s, s.artifacts.torchscript("reflpad3d"), "reflpad3d")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def onnx_reflpad3d(s):
    return via_pnnx(s, s.artifacts.onnx("reflpad3d"), "reflpad3d")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def torchscript_conv_circular(s):
    """nn.Conv2d(padding_mode="circular"), pnnx from TorchScript (#4835's path, with circular)."""
    return via_pnnx(s, s.artifacts.torchscript("conv-circular"), "conv-circular")


@checks.control("pnnx", needs=["ncnn"], **TOL)
def torchscript_reflpad2d(s):
    """nn.ReflectionPad2d on a 4-D tensor, the same TorchScript path."""
    return via_pnnx(s, s.artifacts.torchscript("reflpad2d"), "reflpad2d")


@checks.workaround("pnnx", "drop-value", needs=["ncnn"], **TOL)
def torchscript_pad_reflect_no_value(s):
    """The same decoder with F.pad(x, pad, mode="reflect"), no value=; judged against the original's torch output."""
    return via_pnnx(s, s.artifacts.torchscript("pad-reflect-no-value"), "pad-reflect-no-value")


@checks.workaround("pnnx", "onnx-input", needs=["ncnn"], **TOL)
def onnx_pad_reflect_value0(s):
    return via_pnnx(s, s.artifacts.onnx("pad-reflect-value0-onnx"), "pad-reflect-value0-onnx")


@checks.workaround("pnnx", "onnx-input", needs=["ncnn"], **TOL)
def onnx_conv_circular(s):
    return via_pnnx(s, s.artifacts.onnx("conv-circular-onnx"), "conv-circular-onnx")


@checks.workaround("pnnx", "feed-without-batch", needs=["ncnn"], **TOL)
def torchscript_reflpad3d_fed_4d(s):
    """The 5-D model pnnx wrote, fed as a 4-D (c, d, h, w) Mat with the batch axis dropped, not as its script does."""
    return via_pnnx(s, s.artifacts.torchscript("reflpad3d"), "reflpad3d", batch=False)


# The variants name no five-d-input: a 5-D pad alone fails for every mode (constant too), so a variant that
# fails that way "differs" from the reflect problem; the page says so.
@checks.variants("pnnx", ["wrong-output", "pad-not-registered", "padding-mode-unsupported"], ["reflpad3d-opset13", "reflpad3d-opset17", "reflpad3d-dynamo", "reflpad3d-onnxsim",
                                "replpad3d", "reflect3d-hw", "conv3d-reflect", "constant3d",
                                "reflpad2d-near-miss", "conv-reflect-near-miss", "conv-replicate-near-miss",
                                "reflect1d-near-miss", "resnet-block-near-miss"], needs=["ncnn"], **TOL)
def onnx(s, case):
    """pnnx from the ONNX export, run by ncnn as pnnx's script feeds it."""
    return via_pnnx(s, s.artifacts.onnx(case), case)
