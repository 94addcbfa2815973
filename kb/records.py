"""Check records: an append-only log that merges across runs, machines and workers.

Each process appends to its own JSON-lines file, one `os.write` per record, so concurrent workers
never share a file and a killed run leaves at worst one torn last line, which readers skip.
Merging stores is copying files; records carry a unique id, so a copy made twice is read once.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from pydantic import BaseModel, ConfigDict, ValidationError

from kb import paths
from kb.verdicts import CheckKind, Verdict


class Metrics(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_abs: float | None = None
    max_rel: float | None = None
    nan: int = 0
    total: int = 0
    atol: float | None = None
    rtol: float | None = None
    range_tol: float | None = None


class StepSummary(BaseModel):
    name: str
    command: str
    returncode: int | None
    signal: str | None
    timed_out: bool
    duration: float
    missing: list[str] = []


class Record(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str
    entry: str
    check: str
    kind: CheckKind
    engine: str
    engine_version: str
    verdict: Verdict
    signature: str | None = None  # the signature seen, for `reproduces`
    fingerprint: str | None = None  # for `differs`/`broken`: the failure, normalised to compare runs
    detail: str
    versions: dict[str, str]
    platform: str
    started: datetime
    duration: float
    metrics: Metrics | None = None
    steps: list[StepSummary] = []
    log: str = ""  # excerpt: the lines that matter, bounded
    run: str = ""
    inputs: str = ""  # digest of what the verdict depends on besides the environment (kb.harness.inputs_digest)

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex


class RecordStore:
    def __init__(self, directory: Path | None = None):
        self.dir = directory or paths.state("records")
        self._fd: int | None = None
        self.run_id = f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{socket.gethostname()}-{os.getpid()}"

    def append(self, record: Record) -> None:
        if self._fd is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            path = self.dir / f"{self.run_id}.jsonl"
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        record.run = record.run or self.run_id
        os.write(self._fd, (record.model_dump_json() + "\n").encode())
        os.fsync(self._fd)

    def read(self) -> tuple[list[Record], list[str]]:
        """All records, each once, oldest first; and one problem line per unreadable line."""
        seen: dict[str, Record] = {}
        problems: list[str] = []
        for path, lineno, line in self._lines():
            try:
                rec = Record.model_validate_json(line)
            except ValidationError:
                problems.append(f"{path}:{lineno}: not a valid record, skipped")
                continue
            seen.setdefault(rec.id, rec)
        return sorted(seen.values(), key=lambda r: r.started), problems

    def of_entries(self, slugs: set[str]) -> list[Record]:
        """The readable records of these entries only, each once, oldest first: other entries' lines are
        never parsed (a maintainer's store holds tens of thousands)."""
        keys = tuple(f'"entry":"{s}"' for s in slugs)
        seen: dict[str, Record] = {}
        for _, _, line in self._lines():
            if any(k in line for k in keys):
                try:
                    rec = Record.model_validate_json(line)
                except ValidationError:
                    continue
                seen.setdefault(rec.id, rec)
        return sorted(seen.values(), key=lambda r: r.started)

    def _lines(self) -> Iterator[tuple[Path, int, str]]:
        if not self.dir.is_dir():
            return
        for path in sorted(self.dir.glob("*.jsonl")):
            with path.open(encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    if line.strip():
                        yield path, lineno, line


def rows(records: list[Record]) -> list[dict]:
    """Records as `kb check --json` prints them: the identifying fields first."""
    keys = ("entry", "check", "kind", "engine", "engine_version", "verdict", "detail")
    return [{**{k: getattr(r, k) for k in keys}, **r.model_dump(mode="json", exclude=set(keys))} for r in records]
