from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["topk-not-const", "topk-not-support", "drift"]
VARIANTS = ["quarter", "smallest", "sigmoid-scores", "dim1-of-3d", "opset11", "opset17-onnxsim", "dynamo-static",
            "const-k", "static-shape"]


@checks.variants("mnn", SIGS, VARIANTS)
def convert_and_run(s, case):
    """mnnconvert with default flags, then MNN's module API; compared with torch."""
    return s.mnn.run(s.mnn.convert(case))
