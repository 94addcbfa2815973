"""The vocabulary: what one check run concluded (Verdict), what kind of check it was (CheckKind),
what an entry's status is (Status) and how a run compares with the accepted knowledge (Assessment).
Records, history, status, site, scan and the CLI use these names and groups, and no other."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    REPRODUCES = "reproduces"  # bug/variant check: the failure the entry describes was measured
    FIXED = "fixed"  # bug/variant check: the pipeline completed and matched the reference
    DIFFERS = "differs"  # bug/variant check: it failed some other way (the evidence is kept)
    WORKS = "works"  # workaround/control check: completed and matched the original's reference
    BROKEN = "broken"  # workaround/control check: did not
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


class CheckKind(StrEnum):
    """What a check is for. Only BUG checks decide whether an entry reproduces or is fixed."""

    BUG = "bug"  # the reported failure, on the entry's own case
    VARIANT = "variant"  # the same engine path on another model: its verdict labels the trigger's scope
    CONTROL = "control"  # a model without the trigger, which must run correctly
    WORKAROUND = "workaround"  # a rewrite or another route, judged against the original model's output

    @property
    def judged_as_bug(self) -> bool:
        """Judged reproduces/fixed/differs; the others works/broken."""
        return self in (CheckKind.BUG, CheckKind.VARIANT)


class Status(StrEnum):
    """An entry's (or an engine's) status on one version, from its BUG and WORKAROUND checks."""

    REPRODUCES = "reproduces"  # a bug check measured the failure the entry describes
    DIFFERS = "differs"  # no bug check reproduces, but one fails another way
    FIXED = "fixed"  # every bug check ran on that version and passed
    NOT_MEASURED = "not-measured"  # a bug check errored, was skipped or has no result on that version
    WORKAROUND_WORKS = "workaround-works"  # only workaround checks ran, and they work
    WORKAROUND_BROKEN = "workaround-broken"
    CHANGED = "changed"  # maintainers only: the newest record disagrees with the accepted one
    NOT_CHECKED = "not-checked"
    NOT_CONCERNED = "not-concerned"  # scan: the entry concerns other engines

    @property
    def label(self) -> str:
        return STATUS_LABELS[self]

    @property
    def answer(self) -> str:
        """The status in a reader's words: is my release affected?"""
        return STATUS_ANSWERS.get(self, self.label)


STATUS_LABELS = {
    Status.REPRODUCES: "reproduces",
    Status.DIFFERS: "fails differently",
    Status.FIXED: "fixed",
    Status.NOT_MEASURED: "not measured",
    Status.WORKAROUND_WORKS: "workaround works",
    Status.WORKAROUND_BROKEN: "workaround broken",
    Status.CHANGED: "changed",
    Status.NOT_CHECKED: "not yet checked",
    Status.NOT_CONCERNED: "not concerned",
}


STATUS_ANSWERS = {
    Status.REPRODUCES: "affected",
    Status.DIFFERS: "affected (it fails another way there)",
    Status.FIXED: "not affected",
    Status.NOT_MEASURED: "not measured",
    Status.NOT_CHECKED: "not measured on this release",
}


class EntryKind(StrEnum):
    """What an entry records: an engine's bug, a user's mistake the engines don't catch, or a tool's hazard."""

    ENGINE_BUG = "engine-bug"
    USER_ERROR = "user-error"
    TOOL_HAZARD = "tool-hazard"

    @property
    def label(self) -> str:
        return {EntryKind.ENGINE_BUG: "engine bug", EntryKind.USER_ERROR: "user error",
                EntryKind.TOOL_HAZARD: "tool hazard"}[self]

    def answer(self, status: Status) -> str:
        """A status in a reader's words for this kind: a user error is not "fixed", the engine starts catching it."""
        words = KIND_ANSWERS.get(self, {})
        return words.get(status, status.answer)


KIND_ANSWERS = {
    EntryKind.USER_ERROR: {Status.REPRODUCES: "the mistake still goes unnoticed",
                           Status.FIXED: "the mistake no longer misleads"},
    EntryKind.TOOL_HAZARD: {Status.REPRODUCES: "hazard present", Status.FIXED: "hazard gone"},
}


class Assessment(StrEnum):
    """A run against the accepted knowledge (expected.yaml)."""

    EXPECTED = "expected"  # as accepted for this very version
    CHANGED = "changed"  # differs from what was accepted for this version
    NEW = "new"  # nothing accepted for this check on this version (a new check, or a new engine release)
    SKIPPED = "skipped"
    ERROR = "error"

    @property
    def needs_review(self) -> bool:
        return self in (Assessment.CHANGED, Assessment.NEW, Assessment.ERROR)


class Outcome(StrEnum):
    """How an ONNX node-test case fared on an engine (kb conform): the verdict's reason, in a reader's words.

    A case is judged as a control check is (CheckKind.CONTROL: a model that must run correctly; no bug is
    described, so never reproduces/fixed): WORKS when the engine's whole path completed and matched the
    reference, BROKEN for every way it did not. NOT_APPLICABLE (an input type or rank the engine's runtime does
    not take: ncnn takes float32 tensors only) says nothing about the op, so it is SKIPPED, as an engine that
    is not installed is; CANNOT_FEED (kb cannot build or feed the case's inputs: sequences, optionals) is kb's
    shortcoming, an ERROR. Neither ever counts as a pass."""

    WORKS = "works"
    WRONG_VALUES = "wrong values"  # completed; outputs outside the tolerance, or NaN where the reference is not
    WRONG_SHAPE = "wrong shape"  # completed; an output's shape differs (unit axes aside) or an output is missing
    CONVERT_FAILS = "fails to convert"  # the converter refused or wrote nothing; the detail is its message line
    RUN_FAILS = "fails to run"  # the runtime stopped with an error (load_param failed, an exception)
    CRASH = "crash"  # a step was killed by a signal
    TIMEOUT = "timed out"
    NOT_APPLICABLE = "not applicable"
    CANNOT_FEED = "cannot feed"

    @property
    def verdict(self) -> Verdict:
        if self == Outcome.WORKS:
            return Verdict.WORKS
        if self == Outcome.NOT_APPLICABLE:
            return Verdict.SKIPPED
        if self == Outcome.CANNOT_FEED:
            return Verdict.ERROR
        return Verdict.BROKEN

    @property
    def wrong(self) -> bool:
        """Completed, with the wrong answer: the worst kind of failure, silent."""
        return self in (Outcome.WRONG_VALUES, Outcome.WRONG_SHAPE)
