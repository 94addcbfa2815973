from kb.checks import Checks

checks = Checks(__file__)
BUG = ["slice-step-unsupported", "slice-not-registered", "wrong-output"]

# What onnx2ncnn writes for space-to-depth (tools/onnx/onnx2ncnn.cpp: a Slice becomes a Crop with
# starts/ends/axes; the steps input is read only to print "Unsupported slice step !").
SPACE_TO_DEPTH_AS_ONNX2NCNN_WRITES_IT = """
7767517
11 14
Input            in0                      0 1 in0
Split            splitncnn_input0         1 2 in0 in0_0 in0_1
Crop             /Slice                   1 1 in0_1 s0 -23309=1,0 -23310=1,2147483647 -23311=1,1
Split            splitncnn_0              1 2 s0 s0_0 s0_1
Crop             /Slice_1                 1 1 s0_1 s1 -23309=1,0 -23310=1,2147483647 -23311=1,2
Crop             /Slice_2                 1 1 in0_0 s2 -23309=1,1 -23310=1,2147483647 -23311=1,1
Split            splitncnn_1              1 2 s2 s2_0 s2_1
Crop             /Slice_3                 1 1 s2_1 s3 -23309=1,0 -23310=1,2147483647 -23311=1,2
Crop             /Slice_4                 1 1 s0_0 s4 -23309=1,1 -23310=1,2147483647 -23311=1,2
Crop             /Slice_5                 1 1 s2_0 s5 -23309=1,1 -23310=1,2147483647 -23311=1,2
Concat           /Concat                  4 1 s1 s3 s4 s5 out0 0=0
"""


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


@checks.bug("ncnn", BUG)
def ncnn_crop_has_no_step(s):
    """The runtime half, with the pip ncnn alone: the Crop layers onnx2ncnn writes for the slicing."""
    param = s.ncnn.write_param("space-to-depth.param", SPACE_TO_DEPTH_AS_ONNX2NCNN_WRITES_IT)
    return s.ncnn.run(param, None, "space-to-depth", ["in0"], ["out0"])


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


@checks.workaround("pnnx", "pixel-unshuffle", needs=["ncnn"], atol=2e-3, rtol=2e-3)
def pnnx_torchscript_pixel_unshuffle(s):
    """pnnx stores conv weights as fp16 by default (fp16=1): a difference of a few 1e-4 is that rounding."""
    return via_pnnx(s, s.artifacts.torchscript("pixel-unshuffle"), "pixel-unshuffle")


@checks.variants("onnx2ncnn", BUG, ["focus-opset13", "focus-opset17", "focus-dynamo", "focus-onnxsim", "focus-relu",
                                    "subsample", "subsample-w", "crop-near-miss", "unshuffle-near-miss"],
                 needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return via_onnx2ncnn(s, case)
