from convkb.checks import Checks

checks = Checks(__file__)
# Rounded outputs are exact (integers, or multiples of 0.1 / 0.5): 1e-5 absorbs only float noise, measured 0 where
# MNN is right; a wrong tie is off by a whole step (0.1 or more).


@checks.bug("mnn", ["half-away-from-zero"], atol=1e-5, rtol=0)
def round_ties(s):
    """torch.round on exact halves (-7.5 ... 7.5): MNN's result compared with torch's, value by value."""
    return s.mnn.run(s.mnn.convert("round"))


@checks.variants("mnn", ["half-away-from-zero"], atol=1e-5, rtol=0)
def variant(s, case):
    """Convert with mnnconvert and run with MNN; compare with torch."""
    return s.mnn.run(s.mnn.convert(case))


@checks.workaround("mnn", "floor-rewrite", atol=1e-5, rtol=0)
def floor_rewrite(s):
    """The same rounding written with Floor (no Round op) matches torch exactly on the ties."""
    return s.mnn.run(s.mnn.convert("round-floor"))
