from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["wrong-shape", "wrong-values"]
VARIANTS = ["norm", "norm-no-keepdim", "norm-last-axis", "norm-after-relu", "norm-dynamo", "norm-onnxsim", "normalize",
            "l1", "logsumexp", "mean", "sum", "amax", "norm-attr-opset17", "sqrt-sum-sq"]


@checks.variants("mnn", SIGS, VARIANTS)
def convert_and_run(s, case):
    """mnnconvert with default flags, then MNN's module API; compared with torch."""
    return s.mnn.run(s.mnn.convert(case))
