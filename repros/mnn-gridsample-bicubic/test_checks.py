from kb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-output", "mode-not-supported"]


@checks.bug("mnn", BUG)
def bicubic(s):
    """mode='bicubic', align_corners=False, every grid point inside [-1, 1]."""
    return s.mnn.run(s.mnn.convert("bicubic"))


@checks.bug("mnn", BUG)
def bicubic_align_corners(s):
    return s.mnn.run(s.mnn.convert("bicubic-align-corners"))


@checks.workaround("mnn", "use-bilinear")
def bilinear_control(s):
    """mode='bilinear' on the same input and grid: MNN then computes what torch computes."""
    return s.mnn.run(s.mnn.convert("bilinear-control"))


@checks.variants("mnn", BUG, ["border", "reflection", "conv-relu-before", "tanh-grid", "opset17",
                              "opset20", "onnxsim", "dynamo", "bilinear-near-miss", "nearest-near-miss"])
def convert_run(s, case):
    """Default conversion, Module API."""
    return s.mnn.run(s.mnn.convert(case))

