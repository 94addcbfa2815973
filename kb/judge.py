"""Turn a check's evidence into a verdict, against the entry's declared signatures."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.child import StepResult
from kb.compare import Comparison
from kb.schema import EntryMeta, Signature
from kb.verdicts import Verdict as V

ERRORISH = re.compile(r"error|not support|exception|fail|abort|segmentation|can't|cannot|not exist|nan\b",
                      re.IGNORECASE)
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


def seen(sig: Signature, ev: Evidence) -> str | None:
    """The evidence of `sig` in `ev`, as one line, or None."""
    if sig.kind == "log":
        rx = sig.regex()
        for step in ev.steps:
            for line in step.output.splitlines():
                if rx.search(line):
                    return f"{step.name}: {line.strip()}"
    elif sig.kind == "crash":
        rx = sig.regex()
        for step in ev.steps:
            if step.signal and rx.search(step.signal):
                return f"{step.name}: killed by {step.signal}"
    elif ev.comparison is not None:
        c = ev.comparison
        if sig.kind == "nan" and c.metrics.nan:
            return c.describe()
        if sig.kind == "mismatch" and not c.close and not c.metrics.nan:
            return c.describe()
    return None


def judge(kind: str, signatures: list[str], meta: EntryMeta, ev: Evidence) -> Judgement:
    completed = ev.failed is None
    matches = completed and ev.comparison is not None and ev.comparison.close
    if kind == "workaround":
        if matches:
            return Judgement(V.WORKS, None, ev.comparison.describe())
        return Judgement(V.BROKEN, None, _failure(ev), fingerprint(ev))
    for sid in signatures:
        hit = seen(meta.signature(sid), ev)
        if hit:
            return Judgement(V.REPRODUCES, sid, hit)
    if completed and (ev.comparison is None or ev.comparison.close):
        what = ev.comparison.describe() if ev.comparison else "every step completed"
        return Judgement(V.FIXED, None, what)
    return Judgement(V.DIFFERS, None, _failure(ev), fingerprint(ev))


def _failure(ev: Evidence) -> str:
    if ev.failed is not None:
        return f"{ev.failed.name}: {ev.failed.fate()}: {error_line(ev.failed.output)}"
    if ev.comparison is not None:
        return ev.comparison.describe()
    return "the check produced no outputs to compare"


_VOLATILE = [
    (re.compile(r"\[\d\d:\d\d:\d\d\]\s*(:\d+:)?\s*"), ""),  # MNN's log timestamps
    (re.compile(r"(/[\w.+-]+)+/"), ""),  # directories
    (re.compile(r"0x[0-9a-f]+"), "0x?"),
]


def fingerprint(ev: Evidence) -> str:
    """What failed and how, without timestamps or paths: equal when a run fails the same way."""
    if ev.failed is not None:
        line = error_line(ev.failed.output)
        for rx, sub in _VOLATILE:
            line = rx.sub(sub, line)
        step = re.sub(r"\s.*", "", ev.failed.name)
        fate = "timed out" if ev.failed.timed_out else ev.failed.fate()
        return f"{step}: {fate}: {line.strip()}"
    if ev.comparison is not None and not ev.comparison.close:
        return "outputs differ" if not ev.comparison.metrics.nan else "outputs contain NaN"
    return "no outputs"


def error_line(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for ln in lines:
        if ERRORISH.search(ln):
            return ln[:300]
    return lines[-1][:300] if lines else "(no output)"


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
