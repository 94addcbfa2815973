"""Run one check: export (cached), drive the engines in children, judge the evidence, make a record.

pytest and `kb check` both run checks through `run_check`. Declarations live in kb.checks.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from kb import child, engines, versions
from kb.artifacts import Artifacts, PreparationFailed, prepare
from kb.child import StepFailed, StepResult
from kb.compare import Comparison, Outputs, compare
from kb.engines.base import Unavailable
from kb.checks import Check
from kb.entries import Entry
from kb.errors import KBError
from kb.judge import Evidence, Judgement, excerpt, judge
from kb.pattern import find
from kb.records import Record, StepSummary
from kb.verdicts import BAD, CheckKind, Verdict


class RewriteDiffers(Exception):
    """A workaround's rewrite already gives other results than the original in torch: no engine is run."""


@dataclass
class Session:
    """What a check function gets: the entry's artifacts and the engines, each step in a child."""

    entry: Entry
    artifacts: Artifacts
    workdir: Path
    steps: list[StepResult] = field(default_factory=list)
    comparison: Comparison | None = None
    attempt: int = 0  # of a check with attempts (Check.attempts)

    def __post_init__(self):
        for name in engines.ENGINES:
            setattr(self, name, engines.driver(name)(self))  # s.mnn, s.ncnn, s.onnxruntime, s.pnnx, s.onnx2ncnn

    def step(self, result: StepResult, *, produces: list[Path] = ()) -> StepResult:
        self.steps.append(result)
        if result.returncode == 0:
            result.missing = [p.name for p in produces if not p.exists()]
        if not result.ok:
            raise StepFailed(result)
        return result

    def require_trigger(self, model: Path) -> Path:
        """A model made during the check (e.g. quantized) must show the trigger before it is judged."""
        import onnx

        if not find(self.entry.meta.trigger, onnx.load(str(model), load_external_data=False)):
            raise PreparationFailed(f"{model.name} does not contain the trigger pattern; no engine was judged")
        return model

    def path(self, name: str) -> Path:
        return self.workdir / name

    def source(self, model: Path) -> Path:
        """The path a converter reads: the model's own on a first attempt; on attempt k, the same file through a
        link whose name is k characters long (its external data beside it), since where a converter reads past
        the end of a buffer, the lengths of its paths decide what it finds there (KB064)."""
        if not self.attempt:
            return model
        link = self.path("a" * self.attempt)
        if not link.exists():
            link.symlink_to(model.parent.resolve(), target_is_directory=True)
        return link / model.name

    def against(self, got: Outputs, reference: Outputs) -> tuple[Outputs, Outputs]:
        """Return this from a check to compare with another reference than torch."""
        return got, reference


@functools.cache
def _kb_sources() -> bytes:
    return b"".join(p.read_bytes() for p in sorted(Path(__file__).parent.rglob("*.py")))


def inputs_digest(entry: Entry) -> str:
    """What a verdict depends on besides the installed versions: the entry's Python (reproducer, checks, scripts a
    check runs) and front matter, and kb's own code. A record is reused (a resumed matrix) only while this is
    unchanged."""
    h = hashlib.sha256(_kb_sources())
    for f in sorted(entry.dir.glob("*.py")):
        h.update(f.name.encode() + f.read_bytes())
    h.update(entry.meta.model_dump_json().encode())
    return h.hexdigest()[:16]


def run_check(entry: Entry, check: Check) -> Record:
    started = datetime.now(timezone.utc)
    t0 = time.monotonic()
    engine_version = engines.version(check.engine) or "not installed"

    def record(verdict: str, detail: str, signature=None, ev: Evidence | None = None, fingerprint=None) -> Record:
        comp = ev.comparison if ev else None
        return Record(
            id=Record.new_id(), entry=entry.slug, check=check.name, kind=check.kind, engine=check.engine,
            engine_version=engine_version, verdict=verdict, signature=signature, fingerprint=fingerprint,
            detail=detail,
            versions=versions.environment(), platform=versions.platform_tag(), started=started,
            duration=round(time.monotonic() - t0, 3), metrics=comp.metrics if comp else None,
            steps=[StepSummary(**s.summary()) for s in ev.steps] if ev else [],
            log=excerpt(ev) if ev else "", inputs=inputs_digest(entry),
        )

    missing = [reason for e in check.engines if (reason := engines.missing(e))]
    if missing:
        return record(Verdict.SKIPPED, "; ".join(missing))
    try:
        arts = prepare(entry)
    except PreparationFailed as e:
        return record(Verdict.ERROR, str(e))
    if check.kind == CheckKind.WORKAROUND:
        arts = dataclasses.replace(arts, visit=_rewrite_guard(entry, check, arts))
    worst = None
    for k in range(check.attempts):
        outcome = attempt(entry, check, arts, k, child.ATTEMPT_TIMEOUT if check.attempts > 1 else None)
        if not isinstance(outcome, _Judged):
            return record(*outcome)  # skipped, or an error: nothing about the engine to try again
        if worst is None or _RANK[outcome.j.verdict] > _RANK[worst.j.verdict]:
            worst, worst_at = outcome, k + 1
        if worst.j.verdict in BAD and worst.j.verdict != Verdict.DIFFERS:
            break  # the failure the check looks for: one attempt decides
    j, detail = worst.j, worst.j.detail
    if check.attempts > 1:
        detail += (f" (attempt {worst_at} of up to {check.attempts})" if j.verdict in BAD
                   else f" (each of {check.attempts} attempts)")
    return record(j.verdict, detail, j.signature, worst.ev, j.fingerprint)


def layout(attempt: int) -> dict[str, str]:
    """What attempt k (from 1) changes for its steps besides the length of its folder's and model's paths: the size
    of the environment (where a fresh process's stack starts, what its heap holds first) and, on odd attempts, the
    byte glibc fills new and freed blocks with (a read past a block or after a free finds other bytes). KB182's
    crash ran through under xdist with only the paths changing, in all of 10 attempts. A correct program does the
    same under either, so a crash still names a bug."""
    if not attempt:
        return {}
    env = {"KB_ATTEMPT": "a" * (61 * attempt * attempt)}
    if attempt % 2:
        env["MALLOC_PERTURB_"] = str(37 * attempt % 255 + 1)
    return env


@dataclass
class _Judged:
    j: Judgement
    ev: Evidence


# which attempt's outcome stands: the described failure, then another failure, then a pass
_RANK = {Verdict.FIXED: 0, Verdict.WORKS: 0, Verdict.DIFFERS: 1, Verdict.BROKEN: 2, Verdict.REPRODUCES: 2}


def attempt(entry: Entry, check: Check, arts: Artifacts, k: int, timeout: float | None = None) -> _Judged | tuple:
    """Attempt k of a check (from 0): its paths' lengths and environment (layout(k)); `timeout`: each step's, where
    not the default. bench/crash_stability.py runs every attempt of a crash check, not only up to the first crash."""
    limit = child.step_timeout.set(timeout) if timeout is not None else None
    env = child.step_layout.set(layout(k))
    try:
        return _attempt(entry, check, arts, k)
    finally:
        child.step_layout.reset(env)
        if limit is not None:
            child.step_timeout.reset(limit)


def _attempt(entry: Entry, check: Check, arts: Artifacts, attempt: int) -> _Judged | tuple:
    """One run of the check in a fresh working folder: a judgement, or (verdict, detail[, signature, ev,
    fingerprint]) where nothing about the engine was judged."""
    with tempfile.TemporaryDirectory(prefix=f"kb-{entry.slug}-{'_' * attempt}") as tmp:
        session = Session(entry, arts, Path(tmp), attempt=attempt)
        failed = None
        comparison = None
        try:
            got = check.fn(session)
            if got is not None:
                got, ref = got if isinstance(got, tuple) else (got, _reference(check, arts, got.case))
                comparison = compare(got, ref, check.atol, check.rtol, check.range_tol)
        except StepFailed as e:
            failed = e.step
        except Unavailable as e:
            return Verdict.SKIPPED, str(e)
        except RewriteDiffers as e:
            return Verdict.BROKEN, str(e), None, None, "the rewrite differs from the original in torch"
        except PreparationFailed as e:
            return Verdict.ERROR, str(e)
        except Exception as e:  # a bug in the check itself: say where, without a traceback
            return Verdict.ERROR, str(KBError(entry.test, f"check {check.name!r} raised {type(e).__name__}: {e}"))
        if failed is None and comparison is None:  # every step passed, but nothing was compared
            return Verdict.ERROR, str(KBError(entry.test, f"check {check.name!r} returned no outputs, so "
                                                          "nothing was judged: return the engine's outputs, e.g. "
                                                          "`return s.mnn.run(...)`"))
        ev = Evidence(session.steps, failed, comparison)
        return _Judged(judge(check.kind, list(check.signatures), entry.meta, ev,
                             generic_messages(entry.dir.parent.parent)), ev)


def _reference(check: Check, arts: Artifacts, case: str) -> Outputs:
    """Workarounds are judged against the original model's torch output, never their own."""
    if check.kind != CheckKind.WORKAROUND or arts.original(case) == case:
        return arts.torch_outputs(case)
    orig = arts.torch_outputs(arts.original(case))
    return Outputs(case, orig.arrays, f"torch (original case {orig.case!r})")


def _rewrite_guard(entry: Entry, check: Check, arts: Artifacts):
    """Before an engine touches a workaround's case, check that case against the original in torch."""
    done: set[str] = set()

    def visit(case: str) -> None:
        if case in done:
            return
        done.add(case)
        item = arts.manifest[case]
        if not item.get("rewrites"):
            if entry.meta.trigger and item.get("trigger") is False:  # a model without the trigger that replaces nothing
                raise PreparationFailed(str(KBError(entry.repro, f"workaround check {check.name!r} runs case "
                                                    f"{case!r}, which has no trigger and rewrites nothing: declare "
                                                    "the case it replaces, Case(..., rewrites='<original>')")))
            return
        c = compare(arts.torch_outputs(case), arts.torch_outputs(item["rewrites"]), check.atol, check.rtol,
                    check.range_tol)
        if not c.close:
            raise RewriteDiffers(f"the rewrite {case!r} already differs from the original "
                                 f"{item['rewrites']!r} in torch, before any engine: {c.describe()}")

    return visit


@functools.cache
def generic_messages(root: Path) -> frozenset[str]:
    """Ids of the messages printed for many causes: their lines reproduce an entry only with its evidence."""
    from kb import messages

    return frozenset(m.id for m in messages.load_all(root).values() if m.generic)
