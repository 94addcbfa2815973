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
    Signature(id="segfault", kind="crash", pattern="SIGSEGV", summary="the engine crashes")]})


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


def test_first_listed_signature_wins():
    s = step("These Op Not Support: ONNX::FakeWidget\nBroad cast error, dim1 = 512, dim2 = 64", rc=1)
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


def test_workaround_needs_matching_outputs():
    assert judge("workaround", [], META, Evidence([step()], None, outputs([1, 2], [1, 2]))).verdict == "works"
    assert judge("workaround", [], META, Evidence([step()], None, outputs([1, 3], [1, 2]))).verdict == "broken"
    s = step(rc=1)
    assert judge("workaround", [], META, Evidence([s], s, None)).verdict == "broken"


def test_range_tolerance_for_quantized_outputs():
    ref = Outputs("c", {"y": np.array([10.0, -10.0])}, "torch")
    assert compare(Outputs("c", {"y": np.array([10.5, -10.0])}, "MNN"), ref, 0, 0, range_tol=0.1).close
    assert not compare(Outputs("c", {"y": np.array([12.0, -10.0])}, "MNN"), ref, 0, 0, range_tol=0.1).close
