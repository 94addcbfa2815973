"""Run the corpus against many versions of one engine, each in its own cached environment.

Each version gets one worker process (`kb check --json --reuse` with that version first on
PYTHONPATH). Exports are cached by content and torch version, so torch runs once per entry, not
once per version. Records already made in the same environment are reused, so an interrupted
matrix resumes where it stopped without duplicating anything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import datetime, timezone

from kb import child, envs, versions
from kb.engines import ENGINES
from kb.entries import Entry
from kb.checks import Check, load_checks
from kb.records import Record, RecordStore
from kb.verdicts import Verdict as V


def plan(entries: list[Entry], engine: str) -> list[tuple[Entry, Check]]:
    return [(e, c) for e in entries for c in load_checks(e).items.values() if engine in c.engines]


def _placeholder(entry: Entry, check: Check, engine: str, version: str, verdict: str, detail: str) -> Record:
    """A version that could not be measured is recorded as such, once per check."""
    env = versions.environment() | {engine: version}
    return Record(id=Record.new_id(), entry=entry.slug, check=check.name, kind=check.kind, engine=check.engine,
                  engine_version=env.get(check.engine, version), verdict=verdict, detail=detail, versions=env,
                  platform=versions.platform_tag(), started=datetime.now(timezone.utc), duration=0.0)


def run_version(engine: str, version: str, entries: list[Entry], timeout: float = 1800) -> tuple[list[Record], str]:
    """Measure one version; returns its records and a problem line ('' when it ran)."""
    todo = plan(entries, engine)
    env = envs.ensure(engine, version)
    if env.path is None:
        return [_placeholder(e, c, engine, version, V.UNAVAILABLE, env.problem) for e, c in todo], env.problem
    _arm64_site(engine, version, todo)
    child_env = {**os.environ, "PYTHONPATH": envs.python_path(env)}
    probe = subprocess.run([sys.executable, "-c", ENGINES[engine].probe], env=child_env,
                           capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        lines = probe.stderr.strip().splitlines() or [f"exit code {probe.returncode}"]
        why = next((ln for ln in reversed(lines) if "Error:" in ln), lines[-1]).strip()
        problem = f"{envs.dist(engine)}=={version} does not import: {why}"
        return [_placeholder(e, c, engine, version, V.ERROR, problem) for e, c in todo], problem
    argv = [sys.executable, "-m", "kb", "check", *[e.slug for e in entries], "--engine", engine, "--json", "--reuse"]
    try:
        p = subprocess.run(argv, env=child_env, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=child.dies_with_parent)  # noqa: PLW1509 -- one prctl, no lock
        rows = json.loads(p.stdout) if p.returncode in (0, 1) else None
    except (subprocess.TimeoutExpired, json.JSONDecodeError):
        p, rows = None, None
    if rows is None:
        why = (p.stderr.strip().splitlines() or ["no output"])[-1] if p else f"timed out after {timeout:.0f}s"
        problem = f"the checks did not finish on {envs.dist(engine)}=={version}: {why}"
        return [_placeholder(e, c, engine, version, V.ERROR, problem) for e, c in todo], problem
    return [Record.model_validate(r) for r in rows], ""


def _arm64_site(engine: str, version: str, todo: list[tuple[Entry, Check]]) -> None:
    """Checks on an emulated ARM CPU (a row's `cpu:`) run this version's aarch64 wheel: fetch it as the version's
    environment was (`kb tools build arm64` makes the installed version's only). Where it cannot be made, those
    checks are unavailable and say why."""
    from kb.errors import KBError
    from kb.tools import arm64

    if engine in arm64.WHEELS and any(c.cpu for _, c in todo):
        try:
            arm64.build(version, engine)
        except KBError:
            pass


def run(engine: str, version_list: list[str], entries: list[Entry], workers: int, progress=None) -> list[Record]:
    """Measure every version (in parallel workers); placeholders are appended to the store here,
    real check records by the workers themselves."""
    store = RecordStore()
    task = progress.add_task(f"{engine} matrix", total=len(version_list)) if progress else None
    results: dict[str, list[Record]] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run_version, engine, v, entries): v for v in version_list}
        for f in as_completed(futures):
            v = futures[f]
            records, problem = f.result()
            if problem:
                for r in records:
                    store.append(r)
                if progress:
                    progress.console.print(f"{engine} {v}: {problem}", markup=False, highlight=False)
            results[v] = records
            if progress:  # a line per version too: the bar is transient, and absent when not a terminal
                progress.console.print(f"{engine} {v}: {len(records)} checks measured", highlight=False)
                progress.advance(task)
    return [r for v in versions.sort_versions(results) for r in results[v]]
