from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["split-group-error", "drift"]
VARIANTS = ["depthwise-no-bias", "depthwise-multiplier", "grouped-uneven", "depthwise-bn-relu", "deconv1d-grouped",
            "deconv1d-depthwise", "depthwise-opset17-onnxsim", "depthwise-dynamo", "deconv1d-dynamo", "upsample-conv",
            "ungrouped-2d"]


@checks.variants("mnn", SIGS, VARIANTS)
def convert_and_run(s, case):
    """mnnconvert with default flags, then MNN's module API; compared with torch."""
    return s.mnn.run(s.mnn.convert(case))
