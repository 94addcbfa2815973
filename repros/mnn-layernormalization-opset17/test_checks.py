from convkb.checks import Checks

checks = Checks(__file__)
SIGS = ["op-not-support", "drift"]
VARIANTS = ["last-dim", "two-dims", "no-affine", "no-bias", "opset18", "dynamo", "onnxsim", "transformer-block",
            "channels-permute", "opset13-decomposed"]


@checks.bug("mnn", SIGS)
def ln_opset17(s):
    """nn.LayerNorm exported at opset 17: one ONNX LayerNormalization node, default converter flags."""
    return s.mnn.run(s.mnn.convert("ln-opset17"))


@checks.workaround("mnn", "lower-opset")
def ln_opset13(s):
    """The maintainers' suggestion on old converters: export at opset <= 16, so no LayerNormalization is written."""
    return s.mnn.run(s.mnn.convert("ln-opset13"))


@checks.variants("mnn", SIGS, VARIANTS)
def convert_and_run(s, case):
    """mnnconvert with default flags, then MNN's module API; compared with torch."""
    return s.mnn.run(s.mnn.convert(case))
