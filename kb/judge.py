"""Turn a check's evidence into a verdict, against the entry's declared signatures."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kb.child import StepResult
from kb.logs import ERRORISH, error_line as _line, steady
from kb.schema import EntryMeta, Signature
from kb.verdicts import CheckKind, Verdict as V

if TYPE_CHECKING:
    from kb.compare import Comparison

EXCERPT_CHARS = 4000


@dataclass
class Evidence:
    steps: list[StepResult]
    failed: StepResult | None  # the step that stopped the check, if one did
    comparison: Comparison | None


@dataclass
class Judgement:
    verdict: str
    signature: str | None
    detail: str
    fingerprint: str | None = None


def seen(sig: Signature, ev: Evidence, generic: bool = False) -> str | None:
    """The evidence of `sig` in `ev`, as one line, or None. The measurement decides: a line or a signal
    counts only where the check failed, in the step the signature names, never beside a correct result."""
    c = ev.comparison
    wrong = ev.failed is not None or (c is not None and not c.close)  # the measurement shows a failure
    if sig.kind == "log":
        if not wrong or (generic and not sig.step):
            return None  # a warning beside a correct output; a generic line in no named step
        rx = sig.regex()
        steps = ev.steps[: ev.steps.index(ev.failed) + 1] if ev.failed in ev.steps else ev.steps
        for step in steps:  # up to the step that stopped the check: a later step's line is not this failure
            if _in_step(sig, step):
                for line in step.output.splitlines():
                    if rx.search(line):
                        died = f" (then killed by {step.signal})" if step is ev.failed and step.signal else ""
                        return f"{step.name}: {line.strip()}{died}"
        if sig.or_signal:
            return _killed(sig, sig.or_signal, ev.failed)
    elif sig.kind == "crash":
        return _killed(sig, sig.pattern, ev.failed)
    elif c is not None and ev.failed is None:
        if sig.kind == "shape" and c.shape_differs:
            return c.describe()
        if c.shape_differs:
            return None  # values of tensors of other shapes are not compared
        if sig.kind == "nan" and c.metrics.nan:
            return c.describe()
        if sig.kind == "mismatch" and not c.close and (sig.or_nan or not c.metrics.nan):
            return c.describe()
    return None


def _killed(sig: Signature, signal: str, step: StepResult | None) -> str | None:
    if step is not None and step.signal and re.search(signal, step.signal) and _in_step(sig, step):
        return f"{step.name}: killed by {step.signal}"
    return None


def _in_step(sig: Signature, step: StepResult) -> bool:
    return sig.step is None or step.name.split()[0] == sig.step


def judge(kind: CheckKind, signatures: list[str], meta: EntryMeta, ev: Evidence,
          generic: frozenset[str] = frozenset()) -> Judgement:
    """`generic`: ids of the messages printed for many causes (kb.messages): their lines count only in the
    step the signature names."""
    completed = ev.failed is None
    matches = completed and ev.comparison is not None and ev.comparison.close
    if not CheckKind(kind).judged_as_bug:
        if matches:
            return Judgement(V.WORKS, None, ev.comparison.describe())
        return Judgement(V.BROKEN, None, _failure(ev), fingerprint(ev))
    for sid in signatures:
        sig = meta.signature(sid)
        hit = seen(sig, ev, sig.message in generic)
        if hit:
            return Judgement(V.REPRODUCES, sid, hit)
    if matches:
        return Judgement(V.FIXED, None, ev.comparison.describe())
    return Judgement(V.DIFFERS, None, _failure(ev), fingerprint(ev))


def _failure(ev: Evidence) -> str:
    if ev.failed is not None:
        return f"{ev.failed.name}: {ev.failed.fate()}: {error_line(ev.failed.output)}"
    if ev.comparison is not None:
        return ev.comparison.describe()
    return "the check produced no outputs to compare"


def fingerprint(ev: Evidence) -> str:
    """What failed and how, without timestamps or paths: equal when a run fails the same way."""
    if ev.failed is not None:
        line = steady(error_line(ev.failed.output))
        step = re.sub(r"\s.*", "", ev.failed.name)
        fate = "timed out" if ev.failed.timed_out else ev.failed.fate()
        return f"{step}: {fate}: {line}"
    if ev.comparison is not None and not ev.comparison.close:
        if ev.comparison.shape_differs:
            return "output shape differs"
        return "outputs differ" if not ev.comparison.metrics.nan else "outputs contain NaN"
    return "no outputs"


def error_line(output: str) -> str:
    return _line(output) or "(no output)"


def excerpt(ev: Evidence) -> str:
    """The lines that matter from every step, bounded."""
    parts = []
    for step in ev.steps:
        lines = [ln.rstrip() for ln in step.output.splitlines() if ln.strip()]
        keep = [ln for ln in lines if ERRORISH.search(ln)][:20] + lines[-5:]
        uniq = list(dict.fromkeys(keep))
        parts.append(f"$ {step.command}\n" + "\n".join(uniq) + f"\n[{step.fate()}, {step.duration:.2f}s]")
    text = "\n".join(parts)
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "\n[...]"
