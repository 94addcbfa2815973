"""The verdict vocabulary: what one check run concluded. Records, history, status, site, scan and
the CLI all use these names and groups, and no other."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    REPRODUCES = "reproduces"  # bug check: a declared signature was seen
    FIXED = "fixed"  # bug check: the pipeline completed and matched the reference
    DIFFERS = "differs"  # bug check: it failed some other way (the evidence is kept)
    WORKS = "works"  # workaround check: completed and matched
    BROKEN = "broken"  # workaround check: did not
    SKIPPED = "skipped"  # an engine is not installed
    ERROR = "error"  # the reproducer or the check is broken, or the engine does not import
    UNAVAILABLE = "unavailable"  # a version `kb matrix` could not install

    @property
    def short(self) -> str:
        """One letter, for the matrix."""
        return "-" if self in NO_OBSERVATION else self.value[0].upper()


BAD = frozenset({Verdict.REPRODUCES, Verdict.DIFFERS, Verdict.BROKEN})  # the engine misbehaves
GOOD = frozenset({Verdict.FIXED, Verdict.WORKS})
MEASURED = BAD | GOOD  # the engine ran and was judged
NO_OBSERVATION = frozenset({Verdict.SKIPPED, Verdict.UNAVAILABLE})  # says nothing about the engine
NEVER_ACCEPTED = NO_OBSERVATION | {Verdict.ERROR}  # `kb accept` keeps these out of expected.yaml
