from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-output"]


@checks.bug("mnn", BUG)
def output_shape(s):
    """ConvTranspose k=3 s=2 with output_shape [16, 16] on an 8x8 input: 1 pixel of padding to place."""
    return s.mnn.run(s.mnn.convert("output-shape"))


@checks.workaround("mnn", "explicit-pads")
def explicit_pads(s):
    """The same layer exported with pads and output_padding (torch's own ConvTranspose2d export)."""
    return s.mnn.run(s.mnn.convert("explicit-pads"))


@checks.variants("mnn", BUG, ["relu-after", "conv-relu-before", "two-layers", "kernel5-total3", "non-square",
                              "stride3", "opset17", "onnxsim", "explicit-pads-near-miss",
                              "explicit-pads-two-layers-near-miss"])
def convert_run(s, case):
    """Default conversion, Module API."""
    return s.mnn.run(s.mnn.convert(case))
