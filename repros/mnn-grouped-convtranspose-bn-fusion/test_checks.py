from convkb.checks import Checks

checks = Checks(__file__)


@checks.bug("mnn", ["drift"])
def grouped_bn(s):
    """group=4 ConvTranspose -> BatchNormalization, default converter flags."""
    return s.mnn.run(s.mnn.convert("grouped-bn"))


@checks.bug("mnn", ["drift"])
def grouped_bn_uneven(s):
    """group=2, 8 -> 12 channels."""
    return s.mnn.run(s.mnn.convert("grouped-bn-uneven"))


@checks.bug("mnn", ["drift"])
def grouped_scale(s):
    """group=4 ConvTranspose -> Mul -> Add (MergeScaleToConvolution)."""
    return s.mnn.run(s.mnn.convert("grouped-scale"))


@checks.control("mnn")
def depthwise_bn(s):
    """Control: depthwise deconvolution takes another path (DeconvolutionDepthwise + Scale)."""
    return s.mnn.run(s.mnn.convert("depthwise-bn"))


@checks.control("mnn")
def ungrouped_bn(s):
    """Control: group=1 was never affected."""
    return s.mnn.run(s.mnn.convert("ungrouped-bn"))


@checks.variants("mnn", ["drift"], ["v-grouped-bn-g2", "v-grouped-bn-g8", "v-grouped-bn-opset17", "v-grouped-scale-first",
                                    "v-grouped-scale", "v-depthwise-bn", "v-ungrouped-bn", "v-folded-dynamo"])
def variant(s, case):
    """Convert with default flags, run, compare with torch."""
    return s.mnn.run(s.mnn.convert(case))


@checks.workaround("mnn", "keep-bn-unfused")
def bn_folded_before_conversion(s):
    """Exported with dynamo=True, which folds the BN into the ConvTranspose: nothing left to mis-merge."""
    return s.mnn.run(s.mnn.convert("grouped-bn-folded"))

