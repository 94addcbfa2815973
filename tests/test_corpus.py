"""The contracts every REAL entry (repros/) meets, generated from each entry's own data.

One case per entry and contract (ids are the slugs): adding an entry adds cases, and no test here names
one. kb's other tests run on the fixture corpus (tests/corpus) instead.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kb.entries import Entry, load_all

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = load_all(ROOT)
BY_SLUG = {e.slug: e for e in ENTRIES}


def per_entry(fn):
    return pytest.mark.parametrize("entry", ENTRIES, ids=[e.slug for e in ENTRIES])(fn)


@pytest.fixture(autouse=True)
def real_corpus(monkeypatch):
    """The real corpus, its shared export cache; no records, so statuses come from expected.yaml."""
    monkeypatch.setenv("KB_ROOT", str(ROOT))
    monkeypatch.setenv("KB_CACHE", str(ROOT / ".kb" / "cache"))
    monkeypatch.delenv("KB_RECORDS", raising=False)


def test_there_are_entries():
    assert ENTRIES and len({e.meta.id for e in ENTRIES}) == len(ENTRIES)


# ---- kb explain finds every signature example --------------------------------------------------

@per_entry
def test_every_signature_example_is_explained(entry: Entry):
    from kb.match.explain import explain

    examples = [s for s in entry.meta.signatures if s.kind == "log" and s.example]
    if not examples:
        pytest.skip("no log signature with an example")
    missed = []
    for sig in examples:
        ranked, _ = explain(f"{sig.id}.log", io.BytesIO(f"{sig.example}\n".encode()), ENTRIES)
        found = {x.entry.slug for x in ranked}
        # entries whose own log signature matches the same line share it: all of them must be found, in any order
        sharing = {e.slug for e in ENTRIES for s in e.meta.signatures if s.kind == "log" and s.regex().search(sig.example)}
        if not {entry.slug} | sharing <= found:
            missed.append(f"{sig.id}: {sig.example!r} found {sorted(found)}, "
                          f"expected {sorted({entry.slug} | sharing)}")
    assert not missed, "\n".join(missed)


# ---- kb scan finds every trigger case of the entry's reproducer, and no control case -------------

@per_entry
def test_scan_finds_every_trigger_case_and_no_control(entry: Entry):
    import onnx

    from kb.artifacts import prepare
    from kb.match.scan import find_problems

    arts = prepare(entry)  # cached by content under .kb/cache: exported once
    # variants are labelled by the engine run, not here; an entry may have no trigger case at all when a
    # check builds the triggering model itself (e.g. with a quantizer): its controls must still be clean
    cases = {name: c for name, c in arts.manifest.items() if not c.get("variant")}
    wrong = []
    for name, case in cases.items():
        found = find_problems([entry], onnx.load(str(arts.onnx(name)), load_external_data=False)).found
        if case["trigger"] and not found:
            wrong.append(f"trigger case {name!r}: no pattern of {[p.name for p in entry.meta.trigger]} found")
        if not case["trigger"] and found:
            wrong.append(f"control case {name!r}: pattern {found[0].match.pattern!r} found at "
                         f"{sorted(found[0].match.nodes.values())}")
    assert not wrong, "\n".join(wrong)


# ---- every page renders with its status --------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from kb.site.generate import render

    return render(ROOT, records=tmp_path_factory.mktemp("no-records"))


@per_entry
def test_every_page_renders_with_its_status(entry: Entry, site):
    page = site.pages.get(f"{entry.slug}.md")
    assert page is not None, f"no page for {entry.slug}"
    assert entry.meta.id in page
    assert "data-status=" in page
    assert entry.slug in site.statuses
    assert entry.slug in site.pages["index.md"]  # listed on the home page


# ---- checks load, and each has accepted verdicts ------------------------------------------------

@per_entry
def test_checks_load_and_have_accepted_verdicts(entry: Entry):
    from kb import engines, expectations
    from kb.checks import load_checks

    checks = load_checks(entry).items  # names only declared signatures, workarounds and engines
    assert checks, "the entry declares no checks"
    table = expectations.load(entry.expected)
    unaccepted = []
    for name, c in checks.items():
        if table.get(name):
            continue
        missing = [why for e in c.engines if (why := engines.missing(e))]
        if not missing:  # an engine that is not installed here cannot have been accepted here
            unaccepted.append(f"{name}: nothing accepted in {entry.expected.name} (run `kb check {entry.slug} "
                              f"--check {name}`, then `kb accept {entry.slug} --check {name}`)")
    assert not unaccepted, "\n".join(unaccepted)
    for name, per_version in table.items():
        assert name in checks, f"{entry.expected.name} accepts verdicts for {name!r}, which no check declares"
