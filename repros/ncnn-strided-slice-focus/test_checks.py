from convkb.checks import Checks

checks = Checks(__file__)
# The measurement first: a wrong output shape (the step dropped), or a .param ncnn cannot load; the
# converter's "Unsupported slice step !" counts only beside such a failure.
BUG = ["wrong-shape", "slice-not-registered", "slice-step-unsupported", "wrong-output"]

def via_onnx2ncnn(s, case):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_focus(s):
    """The reported path: onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, "focus")


@checks.bug("ncnn", ["wrong-shape"], needs=["onnx2ncnn"])
def ncnn_crop_has_no_step(s):
    """The runtime half: the .param onnx2ncnn writes for the slicing alone (step-less Crops and a Concat), run
    by the ncnn release under test."""
    return via_onnx2ncnn(s, "space-to-depth")


@checks.bug("pnnx", BUG, needs=["ncnn"])
def pnnx_torchscript_focus(s):
    return via_pnnx(s, s.artifacts.torchscript("focus"), "focus")


@checks.bug("pnnx", BUG, needs=["ncnn"])
def pnnx_onnx_focus(s):
    return via_pnnx(s, s.artifacts.onnx("focus"), "focus")


@checks.workaround("onnx2ncnn", "pixel-unshuffle", needs=["ncnn"])
def onnx2ncnn_pixel_unshuffle(s):
    """The same Focus written with pixel_unshuffle and permuted conv weights, through onnx2ncnn."""
    return via_onnx2ncnn(s, "pixel-unshuffle")


# pnnx stores conv weights as fp16 by default (fp16=1): measured max abs diff 7.2e-4 (20261020), 1.0e-3 (older).
@checks.workaround("pnnx", "pixel-unshuffle", needs=["ncnn"], atol=1.5e-3)
def pnnx_torchscript_pixel_unshuffle(s):
    """The pixel_unshuffle rewrite through pnnx from TorchScript, judged against the original Focus's torch output."""
    return via_pnnx(s, s.artifacts.torchscript("pixel-unshuffle"), "pixel-unshuffle")


@checks.variants("onnx2ncnn", BUG, ["focus-opset13", "focus-opset17", "focus-dynamo", "focus-onnxsim", "focus-relu",
                                    "subsample", "subsample-w", "crop-near-miss", "unshuffle-near-miss"],
                 needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
