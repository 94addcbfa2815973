from convkb.checks import Checks

checks = Checks(__file__)
SIGS = ["wrong-shape", "wrong-values"]
VARIANTS = ["norm", "norm-no-keepdim", "norm-last-axis", "norm-after-relu", "norm-dynamo", "norm-onnxsim", "normalize",
            "l1", "logsumexp", "mean", "sum", "amax", "norm-attr-opset17", "sqrt-sum-sq"]


@checks.bug("mnn", SIGS)
def norm_opset18(s):
    """torch.linalg.vector_norm(x, 2, dim=1, keepdim=True) at opset 18: ReduceL2(x, axes=[1])."""
    return s.mnn.run(s.mnn.convert("norm-opset18"))


@checks.workaround("mnn", "opset17")
def norm_opset17(s):
    return s.mnn.run(s.mnn.convert("norm-opset17"))


@checks.variants("mnn", SIGS, VARIANTS)
def convert_and_run(s, case):
    """mnnconvert with default flags, then MNN's module API; compared with torch."""
    return s.mnn.run(s.mnn.convert(case))
