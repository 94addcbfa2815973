from convkb.checks import Checks

checks = Checks(__file__)
# Indices are integers and the head's Gather copies exact table rows: any difference is a whole index.
TOL = dict(atol=1e-6, rtol=0)
BUG = ["first-index"]
VARIANTS = ["last-3d-axis1", "last-4d-channels", "last-keepdims0", "last-axis0", "last-opset17", "last-opset11",
            "argmin-last-4d", "head-last-opset17", "first-near-miss", "first-keepdims0-near-miss",
            "first-dynamo-near-miss", "argmin-first-dynamo-near-miss", "head-first-near-miss",
            "amax-keepdims0-near-miss"]


@checks.bug("mnn", BUG, **TOL)
def argmax_last(s):
    """ArgMax(axis=-1, keepdims=1, select_last_index=1) on tied scores, MNN's Module API."""
    return s.mnn.convert_run("argmax-last")


@checks.bug("mnn", BUG, **TOL)
def argmax_last_session(s):
    """The same model with MNN's Session API."""
    return s.mnn.run_session(s.mnn.convert("argmax-last"))


@checks.bug("mnn", BUG, **TOL)
def argmin_last(s):
    """ArgMin with select_last_index=1."""
    return s.mnn.convert_run("argmin-last")


@checks.bug("mnn", BUG, **TOL)
def head_last(s):
    """A classification head: ArgMax(select_last_index=1, keepdims=0) feeding a Gather of embedding rows."""
    return s.mnn.convert_run("head-last")


@checks.control("mnn", **TOL)
def argmax_first(s):
    """torch.argmax (the first index, select_last_index=0) on the same tied scores."""
    return s.mnn.convert_run("argmax-first")


@checks.workaround("mnn", "flip", **TOL)
def argmax_last_flip(s):
    """(n - 1) - argmax(flip(x)): the last index with the first-index ArgMax MNN runs."""
    return s.mnn.convert_run("argmax-last-flip")


@checks.workaround("mnn", "flip", **TOL)
def argmin_last_flip(s):
    return s.mnn.convert_run("argmin-last-flip")


@checks.variants("mnn", BUG, VARIANTS, **TOL)
def variant(s, case):
    """mnnconvert, then MNN's Module API; compared with torch."""
    return s.mnn.convert_run(case)
