"""Accepting: which recorded observations become an entry's accepted knowledge. The one code path of
`kb accept` and `pytest --kb-accept`."""

from __future__ import annotations

import os

from kb import expectations, versions
from kb.checks import declared_checks
from kb.entries import find
from kb.errors import KBError
from kb.records import Record


def accept(records: list[Record], only: str | None = None) -> list[str]:
    """Fold the records into their entries' ledgers, newest winning; one line per entry saying what."""
    by_entry: dict[str, list[Record]] = {}
    for r in records:
        by_entry.setdefault(r.entry, []).append(r)
    lines = []
    for slug, mine in by_entry.items():
        try:
            entry = find(slug)
        except KBError as e:
            lines.append(str(e))
            continue
        checks = declared_checks(entry).items
        chosen, kept_out = [], 0
        for r in mine:
            if r.check not in checks or (only is not None and r.check != only):
                continue
            # The ledger is keyed by the check's own engine version, so a record made with another
            # version of an engine it also needs (a matrix over that engine) would be misfiled.
            if any(r.versions.get(n) != versions.of(n) for n in checks[r.check].needs):
                kept_out += 1
                continue
            chosen.append(r)
        if kept_out:
            lines.append(f"{slug}: {kept_out} records made with other versions of a needed engine were kept out")
        if not chosen:
            lines.append(f"{slug}: no records to accept (run `kb check {slug}` first)")
            continue
        n = expectations.accept(entry.expected, chosen, {c.name: c.engine for c in checks.values()},
                                {c.name: c.kind for c in checks.values()})
        lines.append(f"{slug}: {n} observations accepted into {os.path.relpath(entry.expected)}")
    return lines
