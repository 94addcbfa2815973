from kb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-output"]


@checks.variants("mnn", BUG, ["relu-after", "conv-relu-before", "two-layers", "kernel5-total3", "non-square",
                              "stride3", "opset17", "onnxsim", "explicit-pads-near-miss",
                              "explicit-pads-two-layers-near-miss"])
def convert_run(s, case):
    """Default conversion, Module API."""
    return s.mnn.run(s.mnn.convert(case))
