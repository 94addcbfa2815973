from convkb.checks import Checks

checks = Checks(__file__)
VARIANTS = ["isnan-opset13", "isnan-dynamo", "isnan-onnxsim", "isnan-mask-output", "nan-to-num", "masked-fill",
            "conv-isnan-relu", "isnan-count", "ne-self-near-miss", "isinf-near-miss", "isfinite"]


@checks.bug("mnn", ["isnan-not-supported"])
def isnan_where(s):
    """torch.where(torch.isnan(x), 0, x): mnnconvert refuses IsNaN and writes no model."""
    return s.mnn.run(s.mnn.convert("isnan-where"))


@checks.variants("mnn", ["isnan-not-supported"], VARIANTS)
def variant(s, case):
    """Convert with mnnconvert and run with MNN; compare with torch."""
    return s.mnn.run(s.mnn.convert(case))


@checks.bug("mnn", ["nan-passes-through"])
def ne_self_rewrite(s):
    """The usual rewrite, torch.where(x != x, 0, x): converts, but are the NaNs replaced?"""
    return s.mnn.run(s.mnn.convert("ne-self"))


@checks.bug("mnn", ["nan-passes-through"])
def eq_self_rewrite(s):
    """torch.where(x == x, x, 0): the same Equal, the same NaNs left in."""
    return s.mnn.run(s.mnn.convert("eq-self"))


@checks.workaround("mnn", "strict-compare")
def strict_compare(s):
    """torch.where((x < inf) | (x > -inf), x, 0), on an input holding NaN and +inf: matches torch."""
    return s.mnn.run(s.mnn.convert("strict-compare"))


@checks.bug("mnn", ["nan-passes-through"])
def abs_le_rewrite(s):
    """torch.where(|x| <= 3e38, x, 0): MNN's LessEqual is true for NaN, so the NaNs stay."""
    return s.mnn.run(s.mnn.convert("abs-le-big"))
