from kb.checks import Checks

checks = Checks(__file__)
BUG = ["wrong-output"]


@checks.control("mnn")
def computes_border(s):
    """MNN's output for the reflection model, compared with torch's padding_mode='border' output on the same
    input and grid: it works while MNN clamps in place of reflecting (it breaks once MNN reflects)."""
    got = s.mnn.run(s.mnn.convert("reflection"))
    border = s.artifacts.reference("border-control")
    border.source = "torch padding_mode='border'"
    return s.against(got, border)


@checks.variants("mnn", BUG, ["nearest", "conv-relu-before", "offset-grid", "tanh-grid", "opset17", "opset20",
                              "onnxsim", "dynamo", "border-near-miss", "zeros-near-miss"])
def convert_run(s, case):
    """Default conversion, Module API."""
    return s.mnn.run(s.mnn.convert(case))
