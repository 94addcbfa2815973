"""Declare an entry's checks, run one check, judge it and record it.

An entry's test_checks.py declares checks with `checks.bug(...)` / `checks.workaround(...)`;
pytest and `kb check` both run them through `run_check`.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from kb import engines, versions
from kb.artifacts import Artifacts, PreparationFailed, prepare
from kb.child import StepFailed, StepResult
from kb.compare import Comparison, Outputs, compare
from kb.entries import Entry, load_entry
from kb.errors import KBError
from kb.judge import Evidence, excerpt, judge
from kb.pattern import find
from kb.records import Record, StepSummary


@dataclass(frozen=True)
class Check:
    name: str
    kind: str  # "bug" or "workaround"
    engine: str
    fn: Callable
    signatures: tuple[str, ...] = ()  # for bugs: what counts as "reproduces"
    workaround: str | None = None  # for workarounds: the front matter's workaround id
    needs: tuple[str, ...] = ()  # other engines the check drives
    atol: float = 1e-4
    rtol: float = 1e-3
    range_tol: float | None = None  # for quantized outputs: max diff as a fraction of the output range
    doc: str = ""


class Checks:
    """The checks of one entry, declared in its test_checks.py."""

    def __init__(self, test_file: str):
        self.dir = Path(test_file).resolve().parent
        self.items: dict[str, Check] = {}

    def _add(self, fn: Callable, **kw) -> Callable:
        name = fn.__name__.replace("_", "-")
        self.items[name] = Check(name=name, fn=fn, doc=(fn.__doc__ or "").strip(), **kw)
        return fn

    def bug(self, engine: str, signatures: list[str], *, needs=(), **tolerances):
        return lambda fn: self._add(fn, kind="bug", engine=engine, signatures=tuple(signatures),
                                    needs=tuple(needs), **tolerances)

    def workaround(self, engine: str, workaround: str, *, needs=(), **tolerances):
        return lambda fn: self._add(fn, kind="workaround", engine=engine, workaround=workaround,
                                    needs=tuple(needs), **tolerances)

    def entry(self) -> Entry:
        entry = load_entry(self.dir)
        for c in self.items.values():
            known = {s.id for s in entry.meta.signatures}
            for sid in c.signatures:
                if sid not in known:
                    raise KBError(entry.test, f"check {c.name!r} names unknown signature {sid!r}")
            if c.workaround and c.workaround not in {w.id for w in entry.meta.workarounds}:
                raise KBError(entry.test, f"check {c.name!r} names unknown workaround {c.workaround!r}")
            for e in (c.engine, *c.needs):
                if e not in engines.ALL:
                    raise KBError(entry.test, f"check {c.name!r} names unknown engine {e!r}")
        return entry

    def pytest(self):
        """The entry's test function: one parametrized test per check."""
        from kb.pytest_plugin import make_test

        return make_test(self)


@dataclass
class Session:
    """What a check function gets: the entry's artifacts and the engines, each step in a child."""

    entry: Entry
    artifacts: Artifacts
    workdir: Path
    steps: list[StepResult] = field(default_factory=list)
    comparison: Comparison | None = None

    def __post_init__(self):
        for name, cls in engines.ALL.items():
            setattr(self, name, cls(self))  # s.mnn, s.ncnn, s.onnxruntime, s.pnnx, s.onnx2ncnn

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

    def against(self, got: Outputs, reference: Outputs) -> tuple[Outputs, Outputs]:
        """Return this from a check to compare with another reference than torch."""
        return got, reference


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
            log=excerpt(ev) if ev else "",
        )

    missing = [reason for e in (check.engine, *check.needs) if (reason := engines.ALL[e].missing())]
    if missing:
        return record("skipped", "; ".join(missing))
    try:
        arts = prepare(entry)
    except PreparationFailed as e:
        return record("error", str(e))
    with tempfile.TemporaryDirectory(prefix=f"kb-{entry.slug}-") as tmp:
        session = Session(entry, arts, Path(tmp))
        failed = None
        comparison = None
        try:
            got = check.fn(session)
            if got is not None:
                got, ref = got if isinstance(got, tuple) else (got, arts.reference(got.case))
                comparison = compare(got, ref, check.atol, check.rtol, check.range_tol)
        except StepFailed as e:
            failed = e.step
        except PreparationFailed as e:
            return record("error", str(e))
        except Exception as e:  # a bug in the check itself: say where, without a traceback
            return record("error", f"{KBError(entry.test, f'check {check.name!r} raised {type(e).__name__}: {e}')}")
        ev = Evidence(session.steps, failed, comparison)
        j = judge(check.kind, list(check.signatures), entry.meta, ev)
        return record(j.verdict, j.detail, j.signature, ev, j.fingerprint)


def load_checks(entry: Entry) -> Checks:
    """Import the entry's test_checks.py (cheap: engines are only touched in children)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"kb_checks_{entry.slug.replace('-', '_')}", entry.test)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # a broken entry is reported, never a traceback
        raise KBError(entry.test, f"cannot be imported: {type(e).__name__}: {e}") from None
    found = [v for v in vars(module).values() if isinstance(v, Checks)]
    if len(found) != 1:
        raise KBError(entry.test, "must define exactly one `checks = Checks(__file__)`")
    found[0].entry()  # validates names against the front matter
    return found[0]
