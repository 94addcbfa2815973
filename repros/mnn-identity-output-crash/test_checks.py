from kb.checks import Checks
from kb.compare import compare

checks = Checks(__file__)
BUG = ["pipeline-missing-output", "input-not-found", "get-input-failed", "get-output-failed", "load-failed",
       "run-crash"]


@checks.control("mnn")
def consumed_output_module(s):
    """Control: an output that also feeds a Relu, no pass-through; both APIs run it."""
    model = s.mnn.convert("consumed-output")
    s.mnn.run_session(model, "consumed-output")
    return s.mnn.run(model)


@checks.workaround("mnn", "optimize-level-0")
def passthrough_optimize_level_0(s):
    """--optimizeLevel 0 (the maintainer's advice in alibaba/MNN#2734): both APIs run it; the Module's outputs are judged."""
    model = s.mnn.convert("passthrough", "--optimizeLevel", "0", tag="o0")
    got = s.mnn.run_session(model, "passthrough")
    c = compare(got, s.artifacts.torch_outputs("passthrough"), 1e-4, 1e-3, None)
    return got if not c.close else s.mnn.run(model, "passthrough")


@checks.variants("mnn", BUG)
def variant(s, case):
    """Default conversion; run with the Module API, then the Session API: a failure of either reproduces."""
    model = s.mnn.convert(case)
    got = s.mnn.run(model, case)
    if not compare(got, s.artifacts.torch_outputs(case), 1e-4, 1e-3, None).close:
        return got
    return s.mnn.run_session(model, case)
