from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-output"]


@checks.bug("mnn", BUG)
def reflection(s):
    """padding_mode='reflection', align_corners=False, grid points up to 1.6 outside [-1, 1]."""
    return s.mnn.run(s.mnn.convert("reflection"))


@checks.bug("mnn", BUG)
def reflection_align_corners(s):
    return s.mnn.run(s.mnn.convert("reflection-align-corners"))


@checks.control("mnn")
def border_control(s):
    """Control: padding_mode='border' on the same grid."""
    return s.mnn.run(s.mnn.convert("border-control"))


@checks.control("mnn")
def zeros_control(s):
    """Control: padding_mode='zeros' on the same grid."""
    return s.mnn.run(s.mnn.convert("zeros-control"))


@checks.control("mnn")
def computes_border(s):
    """MNN's output for the reflection model, compared with torch's padding_mode='border' output on the same
    input and grid: it works while MNN clamps in place of reflecting (it breaks once MNN reflects)."""
    got = s.mnn.run(s.mnn.convert("reflection"))
    border = s.artifacts.reference("border-control")
    border.source = "torch padding_mode='border'"
    return s.against(got, border)


@checks.workaround("mnn", "mirror-grid-then-border")
def mirrored_border(s):
    """Reflect the grid into [-1, 1] in the model, then sample with padding_mode='border'."""
    return s.mnn.run(s.mnn.convert("mirrored-border"))


@checks.workaround("mnn", "mirror-grid-then-border")
def mirrored_border_align_corners(s):
    return s.mnn.run(s.mnn.convert("mirrored-border-align-corners"))


@checks.variants("mnn", BUG, ["nearest", "conv-relu-before", "offset-grid", "tanh-grid", "opset17", "opset20",
                              "onnxsim", "dynamo", "border-near-miss", "zeros-near-miss"])
def convert_run(s, case):
    """Default conversion, Module API."""
    return s.mnn.run(s.mnn.convert(case))
