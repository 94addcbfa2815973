from kb.harness import Checks

checks = Checks(__file__)
VARIANTS = ["round-opset13", "round-opset18-dynamo", "round-onnxsim", "fake-quant", "fake-quant-dynamo",
            "conv-relu-round", "round-decimals", "floor-near-miss", "ceil-near-miss", "floor-rewrite-dynamo",
            "fake-quant-floor-rewrite"]


@checks.bug("mnn", ["half-away-from-zero"], atol=1e-5, rtol=0)
def round_ties(s):
    """torch.round on exact halves (-7.5 ... 7.5): MNN's result compared with torch's, value by value."""
    return s.mnn.run(s.mnn.convert("round"))


@checks.variants("mnn", ["half-away-from-zero"], VARIANTS, atol=1e-5, rtol=0)
def variant(s, case):
    """Convert with mnnconvert and run with MNN; compare with torch."""
    return s.mnn.run(s.mnn.convert(case))


@checks.workaround("mnn", "floor-rewrite", atol=1e-5, rtol=0)
def floor_rewrite(s):
    """The same rounding written with Floor (no Round op) matches torch exactly on the ties."""
    return s.mnn.run(s.mnn.convert("round-floor"))
