from kb.checks import Checks

checks = Checks(__file__)
# Indices are integers and the head's Gather copies exact table rows: any difference is a whole index.
TOL = dict(atol=1e-6, rtol=0)
BUG = ["first-index"]
VARIANTS = ["last-3d-axis1", "last-4d-channels", "last-keepdims0", "last-axis0", "last-opset17", "last-opset11",
            "argmin-last-4d", "head-last-opset17", "first-near-miss", "first-keepdims0-near-miss",
            "first-dynamo-near-miss", "argmin-first-dynamo-near-miss", "head-first-near-miss",
            "amax-keepdims0-near-miss"]


@checks.variants("mnn", BUG, VARIANTS, **TOL)
def variant(s, case):
    """mnnconvert, then MNN's Module API; compared with torch."""
    return s.mnn.convert_run(case)
