from kb.checks import Checks

checks = Checks(__file__)


@checks.control("mnn")
def computes_border(s):
    """MNN's output for the reflection model, compared with torch's padding_mode='border' output on the same
    input and grid: it works while MNN clamps in place of reflecting (it breaks once MNN reflects)."""
    got = s.mnn.run(s.mnn.convert("reflection"))
    border = s.artifacts.reference("border-control")
    border.source = "torch padding_mode='border'"
    return s.against(got, border)
