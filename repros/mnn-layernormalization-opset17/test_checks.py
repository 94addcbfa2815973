from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["op-not-support", "drift"]
VARIANTS = ["last-dim", "two-dims", "no-affine", "no-bias", "opset18", "dynamo", "onnxsim", "transformer-block",
            "channels-permute", "opset13-decomposed"]


@checks.variants("mnn", SIGS, VARIANTS)
def convert_and_run(s, case):
    """mnnconvert with default flags, then MNN's module API; compared with torch."""
    return s.mnn.run(s.mnn.convert(case))
