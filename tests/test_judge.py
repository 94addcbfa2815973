"""Verdicts follow the declared signatures; anything else is `differs`, with the evidence kept."""

from pathlib import Path

import numpy as np
import pytest

from kb.child import StepResult
from kb.compare import Outputs, compare
from kb.entries import load_entry
from kb.judge import Evidence, fingerprint, judge
from kb.schema import Signature

FIXTURES = Path(__file__).resolve().parent / "corpus" / "repros"
META = load_entry(FIXTURES / "fake-custom-op-broadcast").meta  # log signatures: unsupported-op, broadcast-error
NAN = load_entry(FIXTURES / "fake-pow-nan").meta  # all-nan (kind nan)
# fake-silu-guard's drift (kind mismatch) and nan-output, plus a crash signature: numeric and signal evidence
NUMERIC = NAN.model_copy(update={"signatures": [
    *load_entry(FIXTURES / "fake-silu-guard").meta.signatures, *NAN.signatures,
    Signature(id="segfault", kind="crash", pattern="SIGSEGV", step="mnnconvert", summary="the engine crashes")]})


def step(output="", rc=0, signal=None, missing=()):
    return StepResult("mnnconvert m.onnx", "mnnconvert ...", rc, signal, False, 0.1, output, missing=list(missing))


def outputs(a, b):
    ref = Outputs("c", {"y": np.array(b, dtype=np.float32)}, "torch")
    return compare(Outputs("c", {"y": np.array(a, dtype=np.float32)}, "MNN"), ref, atol=1e-3, rtol=0)


def test_log_signature_reproduces_even_when_the_step_exits_zero():
    s = step("[10:00:00] :220: These Op Not Support: ONNX::MyOp \nConverted Failed!", missing=["m.mnn"])
    j = judge("bug", ["unsupported-op"], META, Evidence([s], s, None))
    assert (j.verdict, j.signature) == ("reproduces", "unsupported-op")
    assert "These Op Not Support: ONNX::MyOp" in j.detail


def test_a_log_line_of_a_step_that_then_crashed_says_so():
    s = step("These Op Not Support: ONNX::MyOp", rc=-11, signal="SIGSEGV")
    j = judge("bug", ["unsupported-op"], META, Evidence([s], s, None))
    assert j.detail == "mnnconvert m.onnx: These Op Not Support: ONNX::MyOp (then killed by SIGSEGV)"


def test_first_listed_signature_wins():
    s = StepResult("onnxruntime fake-convert", "c", 1, None, False, 0.1,
                   "These Op Not Support: ONNX::FakeWidget\nBroad cast error, dim1 = 512, dim2 = 64")
    j = judge("bug", ["broadcast-error", "unsupported-op"], META, Evidence([s], s, None))
    assert j.signature == "broadcast-error"
    j = judge("bug", ["unsupported-op", "broadcast-error"], META, Evidence([s], s, None))
    assert j.signature == "unsupported-op"


def test_clean_run_matching_reference_is_fixed():
    j = judge("bug", ["broadcast-error"], META, Evidence([step()], None, outputs([1, 2], [1, 2])))
    assert j.verdict == "fixed"


def test_other_failure_differs_with_a_stable_fingerprint():
    a = step("[10:00:01] :220: These Op Not Support: ONNX::QLinearConv \n", missing=["/tmp/x/m.mnn"])
    b = step("[11:22:33] :220: These Op Not Support: ONNX::QLinearConv \n", missing=["/tmp/x/m.mnn"])
    ja = judge("bug", ["broadcast-error"], META, Evidence([a], a, None))
    assert ja.verdict == "differs" and "QLinearConv" in ja.detail
    assert fingerprint(Evidence([a], a, None)) == fingerprint(Evidence([b], b, None))


@pytest.mark.parametrize("got, sid", [([np.nan, 1], "all-nan"), ([1, 9], "drift")])
def test_numeric_signatures(got, sid):
    j = judge("bug", ["all-nan", "drift"], NUMERIC, Evidence([step()], None, outputs(got, [1, 2])))
    assert (j.verdict, j.signature) == ("reproduces", sid)


def test_crash_signature():
    s = step(rc=-11, signal="SIGSEGV")
    j = judge("bug", ["segfault"], NUMERIC, Evidence([s], s, None))
    assert (j.verdict, j.detail) == ("reproduces", "mnnconvert m.onnx: killed by SIGSEGV")


def test_log_signature_with_or_signal_counts_that_crash_in_its_step_only():
    # ncnn's Crop reading a second blob that is not there: extract returns -100 on most runs, SIGSEGV on some
    sig = Signature(id="extract-failed", kind="log", pattern="failed with -100", step="ncnn", or_signal="SIGSEGV",
                    summary="extract fails, or the read past the blob list kills the process")
    meta = META.model_copy(update={"signatures": [sig]})
    run = StepResult("ncnn run m.param", "run", -11, "SIGSEGV", False, 0.1, "")
    j = judge("bug", ["extract-failed"], meta, Evidence([run], run, None))
    assert (j.verdict, j.signature, j.detail) == ("reproduces", "extract-failed", "ncnn run m.param: killed by SIGSEGV")
    for other in (StepResult("onnx2ncnn m.onnx", "c", -11, "SIGSEGV", False, 0.1, ""),  # another step
                  StepResult("ncnn run m.param", "run", -8, "SIGFPE", False, 0.1, "")):  # another signal
        assert judge("bug", ["extract-failed"], meta, Evidence([other], other, None)).verdict == "differs"
    plain = meta.model_copy(update={"signatures": [sig.model_copy(update={"or_signal": None})]})
    assert judge("bug", ["extract-failed"], plain, Evidence([run], run, None)).verdict == "differs"
    with pytest.raises(ValueError, match="or_signal needs kind log"):
        Signature(id="x", kind="log", pattern="p", or_signal="SIGSEGV", summary="no step")


def test_a_mismatch_signature_with_or_nan_counts_nan_among_the_wrong_values_as_itself():
    # ncnn's ARM kernel reading past its input: garbage in one run, NaN in another; one fault, one signature
    sig = Signature(id="garbage", kind="mismatch", or_nan=True, summary="values read past the input")
    meta = META.model_copy(update={"signatures": [sig]})
    for got in ([1, 9], [np.nan, 9], [np.inf, 1]):
        j = judge("bug", ["garbage"], meta, Evidence([step()], None, outputs(got, [1, 2])))
        assert (j.verdict, j.signature) == ("reproduces", "garbage"), got
    assert judge("bug", ["garbage"], meta, Evidence([step()], None, outputs([1, 2], [1, 2]))).verdict == "fixed"
    plain = meta.model_copy(update={"signatures": [sig.model_copy(update={"or_nan": False})]})
    assert judge("bug", ["garbage"], plain, Evidence([step()], None, outputs([np.nan, 9], [1, 2]))).verdict == "differs"
    with pytest.raises(ValueError, match="or_nan is for kind mismatch"):
        Signature(id="x", kind="nan", or_nan=True, summary="not a mismatch")


def test_workaround_needs_matching_outputs():
    assert judge("workaround", [], META, Evidence([step()], None, outputs([1, 2], [1, 2]))).verdict == "works"
    assert judge("workaround", [], META, Evidence([step()], None, outputs([1, 3], [1, 2]))).verdict == "broken"
    s = step(rc=1)
    assert judge("workaround", [], META, Evidence([s], s, None)).verdict == "broken"


def test_range_tolerance_for_quantized_outputs():
    ref = Outputs("c", {"y": np.array([10.0, -10.0])}, "torch")
    assert compare(Outputs("c", {"y": np.array([10.5, -10.0])}, "MNN"), ref, 0, 0, range_tol=0.1).close
    assert not compare(Outputs("c", {"y": np.array([12.0, -10.0])}, "MNN"), ref, 0, 0, range_tol=0.1).close


# Mutations: each of these read as "reproduces" (or "works") before the measurement decided.
GENERIC = frozenset({"fake-broadcast-error", "fake-op-not-support"})


def test_a_generic_line_counts_only_in_the_step_the_signature_names():
    sig = META.signature("broadcast-error").model_copy(update={"step": "MNN"})
    meta = META.model_copy(update={"signatures": [sig]})
    s = step("Broad cast error, dim1 = 16, dim2 = 24", rc=1)  # printed by the converter, not by MNN's run
    j = judge("bug", ["broadcast-error"], meta, Evidence([s], s, None), GENERIC)
    assert j.verdict == "differs" and "Broad cast error" in j.fingerprint
    run = StepResult("MNN run m.mnn", "run", 1, None, False, 0.1, "Broad cast error, dim1 = 16, dim2 = 24")
    assert judge("bug", ["broadcast-error"], meta, Evidence([step(), run], run, None), GENERIC).verdict == "reproduces"


def test_a_generic_signature_that_names_no_step_never_reproduces():
    sig = META.signature("broadcast-error").model_copy(update={"step": None})
    meta = META.model_copy(update={"signatures": [sig]})
    s = step("Broad cast error, dim1 = 8, dim2 = 4", rc=1)
    assert judge("bug", ["broadcast-error"], meta, Evidence([s], s, None), GENERIC).verdict == "differs"
    assert judge("bug", ["broadcast-error"], meta, Evidence([s], s, None)).verdict == "reproduces"  # not generic


def test_a_warning_beside_a_correct_output_is_fixed_not_reproduces():
    s = step("These Op Not Support: ONNX::FakeWidget")  # printed, yet the model ran and matched
    j = judge("bug", ["unsupported-op"], META, Evidence([s], None, outputs([1, 2], [1, 2])))
    assert j.verdict == "fixed"


def test_a_line_after_the_failing_step_is_not_its_cause():
    first = step(rc=-11, signal="SIGSEGV")
    later = StepResult("MNN run m.mnn", "run", 1, None, False, 0.1, "These Op Not Support: ONNX::FakeWidget")
    assert judge("bug", ["unsupported-op"], META, Evidence([first, later], first, None)).verdict == "differs"


def test_a_crash_in_another_step_is_another_failure():
    s = StepResult("MNN run m.mnn", "run", -11, "SIGSEGV", False, 0.1, "")
    j = judge("bug", ["segfault"], NUMERIC, Evidence([step(), s], s, None))
    assert j.verdict == "differs" and j.fingerprint.startswith("MNN: killed by SIGSEGV")


def test_shapes_are_compared_as_shapes():
    ref = Outputs("c", {"y": np.arange(6, dtype=np.float32).reshape(2, 3)}, "torch")
    swapped = compare(Outputs("c", {"y": np.arange(6, dtype=np.float32).reshape(3, 2)}, "MNN"), ref, 1e-4, 0)
    assert not swapped.close and swapped.shape_differs  # the same count of values on other axes
    j = judge("bug", ["drift"], NUMERIC, Evidence([step()], None, swapped))
    assert (j.verdict, j.fingerprint) == ("differs", "output shape differs")
    shape = Signature(id="wrong-shape", kind="shape", summary="axes ignored")
    j = judge("bug", ["drift", "wrong-shape"], NUMERIC.model_copy(update={"signatures": [*NUMERIC.signatures, shape]}),
              Evidence([step()], None, swapped))
    assert (j.verdict, j.signature) == ("reproduces", "wrong-shape")  # declared: the shape is the bug
    no_batch = compare(Outputs("c", {"y": np.arange(6, dtype=np.float32).reshape(1, 2, 3)}, "ncnn"), ref, 1e-4, 0)
    assert no_batch.close  # a unit axis dropped or added is the same tensor


def test_torchs_own_infinities_are_not_nan_and_a_nan_input_can_be_rewritten():
    ref = Outputs("c", {"y": np.array([np.inf, 1.0, np.nan])}, "torch")
    same = compare(Outputs("c", {"y": np.array([np.inf, 1.0, np.nan])}, "MNN"), ref, 1e-4, 0)
    assert same.close and same.metrics.nan == 0
    worse = compare(Outputs("c", {"y": np.array([np.inf, np.nan, np.nan])}, "MNN"), ref, 1e-4, 0)
    assert not worse.close and worse.metrics.nan == 1
