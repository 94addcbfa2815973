"""Observations against accepted knowledge: what changed, in words a user can act on."""

from datetime import datetime, timezone

import pytest

from kb import expectations
from kb.records import Record


def rec(verdict, signature=None, version="3.6.1", kind="bug", fingerprint=None):
    return Record(id=Record.new_id(), entry="e", check="c", kind=kind, engine="mnn", engine_version=version,
                  verdict=verdict, signature=signature, fingerprint=fingerprint, detail="d", versions={},
                  platform="p", started=datetime.now(timezone.utc), duration=0.1)


def table(path, *records):
    expectations.accept(path, list(records))
    return expectations.load(path)


@pytest.mark.parametrize("before, now, status, word", [
    (rec("reproduces", "drift"), rec("reproduces", "drift"), "expected", "as accepted"),
    (rec("reproduces", "drift"), rec("fixed"), "changed", "FIXED"),
    (rec("fixed"), rec("reproduces", "drift"), "changed", "REGRESSION"),
    (rec("reproduces", "a"), rec("reproduces", "b"), "changed", "CHANGED"),
    (rec("differs", fingerprint="x"), rec("differs", fingerprint="y"), "changed", "FAILS DIFFERENTLY"),
    (rec("works", kind="workaround"), rec("broken", kind="workaround"), "changed", "WORKAROUND BROKEN"),
])
def test_assess(tmp_path, before, now, status, word):
    a = expectations.assess(now, table(tmp_path / "expected.yaml", before))
    assert a.status == status and word in a.message
    if status == "changed":
        assert "kb accept e --check c" in a.message


def test_new_check_says_how_to_accept(tmp_path):
    a = expectations.assess(rec("fixed"), {})
    assert a.status == "new" and "kb accept e --check c" in a.message


def test_a_version_nobody_accepted_is_new_and_says_what_moved_against_the_nearest_older_one(tmp_path):
    # Mutation: this read "expected" when an unlisted version borrowed the nearest older verdict.
    t = table(tmp_path / "expected.yaml", rec("reproduces", "s", "3.0.0"), rec("fixed", version="3.4.0"))
    assert expectations.lookup(t, "c", "3.6.1") is None
    assert expectations.nearest(t, "c", "3.6.1").version == "3.4.0"
    assert expectations.nearest(t, "c", "2.9.6").version == "3.0.0"  # nothing older: the oldest known
    same = expectations.assess(rec("fixed", version="3.6.1"), t)
    assert same.status == "new" and "the same as fixed on mnn 3.4.0" in same.message
    moved = expectations.assess(rec("reproduces", "s", version="3.6.1"), t)
    assert moved.status == "new" and "REGRESSION against fixed" in moved.message


def test_accept_keeps_other_versions_and_skips_non_verdicts(tmp_path):
    path = tmp_path / "expected.yaml"
    table(path, rec("reproduces", "s", "3.0.0"))
    t = table(path, rec("fixed", version="3.6.1"), rec("skipped", version="3.7.0"))
    assert sorted(t["c"]) == ["3.0.0", "3.6.1"]


def test_a_corrupt_expectations_file_is_one_clear_error(tmp_path):
    from kb.errors import KBError

    path = tmp_path / "expected.yaml"
    path.write_text("c:\n  3.6.1: [not, a, mapping]\n")
    with pytest.raises(KBError, match="expected.yaml: not a valid expectations file"):
        expectations.load(path)


# Mutations of the status: each of these read "fixed" while errors, skips and controls counted.
from kb.status import summarize  # noqa: E402
from kb.verdicts import CheckKind as K, Status  # noqa: E402


def test_an_errored_bug_check_keeps_an_entry_from_fixed():
    got = summarize({"a": (K.BUG, "error"), "b": (K.BUG, "error"), "c1": (K.CONTROL, "works"),
                     "c2": (K.CONTROL, "works")})
    assert got[0] == Status.NOT_MEASURED


def test_a_bug_check_without_a_result_on_the_version_is_not_measured():
    assert summarize({"a": (K.BUG, "fixed"), "b": (K.BUG, None)})[0] == Status.NOT_MEASURED
    assert summarize({"a": (K.BUG, "fixed"), "b": (K.BUG, "skipped")})[0] == Status.NOT_MEASURED


def test_controls_and_variants_never_count_toward_fixed():
    got = summarize({"a": (K.BUG, "reproduces"), "v": (K.VARIANT, "fixed"), "c": (K.CONTROL, "works")})
    assert got[0] == Status.REPRODUCES
    assert summarize({"a": (K.BUG, "fixed"), "v": (K.VARIANT, "reproduces")})[0] == Status.FIXED


def test_fixed_needs_every_bug_check_measured_and_passing():
    assert summarize({"a": (K.BUG, "fixed"), "b": (K.BUG, "fixed")})[0] == Status.FIXED


# The ledger on disk: runs of releases, provenance once, no local ids.
def test_the_ledger_groups_releases_into_runs_and_keeps_every_verdict(tmp_path):
    path = tmp_path / "expected.yaml"
    records = [rec("reproduces", "s", v) for v in ("3.0.0", "3.1.0", "3.2.0")] + [rec("fixed", version="3.4.0"),
                                                                                   rec("fixed", version="3.6.1")]
    expectations.accept(path, records, {"c": "mnn"})
    text = path.read_text()
    assert "versions: [3.0.0, 3.1.0, 3.2.0]" in text and "versions: [3.4.0, 3.6.1]" in text
    assert "record:" not in text and text.count("platform:") == 1
    t = expectations.load(path)
    assert {v: (e.verdict, e.signature) for v, e in t["c"].items()} == {
        "3.0.0": ("reproduces", "s"), "3.1.0": ("reproduces", "s"), "3.2.0": ("reproduces", "s"),
        "3.4.0": ("fixed", None), "3.6.1": ("fixed", None)}


def test_accepting_one_release_changes_one_line_of_the_ledger(tmp_path):
    path = tmp_path / "expected.yaml"
    expectations.accept(path, [rec("reproduces", "s", v) for v in ("3.0.0", "3.1.0")], {"c": "mnn"})
    before = path.read_text().splitlines()
    expectations.accept(path, [rec("reproduces", "s", "3.2.0")], {"c": "mnn"})
    after = path.read_text().splitlines()
    assert [(a, b) for a, b in zip(before, after) if a != b] == [
        ("    - versions: [3.0.0, 3.1.0]", "    - versions: [3.0.0, 3.1.0, 3.2.0]")]


def test_a_check_no_longer_declared_leaves_the_ledger(tmp_path):
    path = tmp_path / "expected.yaml"
    expectations.accept(path, [rec("fixed")], {"c": "mnn"})
    expectations.accept(path, [], {"d": "mnn"})
    assert expectations.load(path) == {}


def test_the_ledger_records_each_checks_kind(tmp_path):
    import yaml

    path = tmp_path / "expected.yaml"
    expectations.accept(path, [rec("reproduces", "s")], {"c": "mnn"}, {"c": "bug"})
    assert yaml.safe_load(path.read_text())["kinds"] == {"c": "bug"}
    assert expectations.load(path)["c"]["3.6.1"].verdict == "reproduces"


def test_every_ledger_in_the_corpus_records_the_kinds_its_entry_declares():
    from pathlib import Path

    import yaml

    from kb.checks import declared_checks
    from kb.entries import load_all

    wrong = []
    for e in load_all(Path(__file__).resolve().parents[1]):
        if not e.expected.is_file():
            continue
        kinds = (yaml.safe_load(e.expected.read_text(encoding="utf-8")) or {}).get("kinds", {})
        declared = {c.name: str(c.kind) for c in declared_checks(e).items.values()}
        wrong += [f"{e.slug}: {n}" for n, k in kinds.items() if declared.get(n) != k]
        wrong += [f"{e.slug}: {n} has verdicts but no kind" for n in expectations.load(e.expected) if n not in kinds]
    assert not wrong, wrong


def test_a_check_whose_engine_changed_keeps_no_release_of_the_old_engine(tmp_path):
    path = tmp_path / "expected.yaml"
    expectations.accept(path, [rec("reproduces", "s", "a4d2ea1").model_copy(update={"engine": "onnx2ncnn"})],
                        {"c": "onnx2ncnn"})
    expectations.accept(path, [rec("reproduces", "s", "1.0.20261020").model_copy(update={"engine": "ncnn"})], {"c": "ncnn"})
    t = expectations.load(path)
    assert set(t["c"]) == {"1.0.20261020"} and t["c"]["1.0.20261020"].engine == "ncnn"
    assert "a4d2ea1" not in path.read_text()
