from convkb.checks import Checks

checks = Checks(__file__)
SIGS = ["split-group-error", "drift"]
VARIANTS = ["depthwise-no-bias", "depthwise-multiplier", "grouped-uneven", "depthwise-bn-relu", "deconv1d-grouped",
            "deconv1d-depthwise", "depthwise-opset17-onnxsim", "depthwise-dynamo", "deconv1d-dynamo", "upsample-conv",
            "ungrouped-2d"]


@checks.bug("mnn", SIGS)
def depthwise(s):
    """ConvTranspose2d(8, 8, groups=8): MNN's DeconvolutionDepthwise."""
    return s.mnn.run(s.mnn.convert("depthwise"))


@checks.bug("mnn", SIGS)
def grouped(s):
    """ConvTranspose2d(8, 16, groups=4)."""
    return s.mnn.run(s.mnn.convert("grouped"))


@checks.bug("mnn", SIGS)
def deconv1d(s):
    """ConvTranspose1d(8, 16): a 3-D input."""
    return s.mnn.run(s.mnn.convert("deconv1d"))


@checks.variants("mnn", SIGS, VARIANTS)
def convert_and_run(s, case):
    """mnnconvert with default flags, then MNN's module API; compared with torch."""
    return s.mnn.run(s.mnn.convert(case))
