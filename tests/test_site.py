"""The documentation site, built (strict) from a temporary copy of the corpus with made-up records.

The copy gets a known history, so every status the pages show can be checked against its source:
  KB001  accepted on two MNN versions, affected then fixed; renamed (an alias to redirect); one
         check could not be measured on the version between (its fix is inferred)
  KB002  a new record disagrees with the accepted verdict          -> changed
  KB003  records agree with the accepted verdicts, on a fake env   -> reproduces, env from records
  KB004  no records, accepted verdicts only; onnx2ncnn never run   -> reproduces, not yet checked rows
  KB005  nothing accepted, nothing recorded                        -> not yet checked
"""

from __future__ import annotations

import html
import json
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kb import expectations
from kb.entries import load_all
from kb.pattern import Pattern
from kb.records import Record, RecordStore
from kb.site import build_site
from kb.harness import Check
from kb.history import timelines
from kb.site.generate import _redirects
from kb.site.status import derive
from kb.site.svg import draw, layers
from kb.site.table import engine_table

REPO = Path(__file__).resolve().parents[1]
ALIAS = ("mnn-groupnorm-unregistered-custom-op", "mnn-groupnorm-custom-op")
FAKE_ENV = {"torch": "9.9.9+fake", "onnx": "8.8.8", "onnxruntime": "7.7.7", "mnn": "3.6.1", "python": "3.11.99"}
FAKE_PLATFORM = "FakeOS-riscv64 (cpython 3.11.99)"
T0 = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def record(entry: str, check: str, kind: str, engine: str, version: str, verdict: str, *, signature=None,
           fingerprint=None, started=T0, versions=None, platform=FAKE_PLATFORM) -> Record:
    return Record(id=Record.new_id(), entry=entry, check=check, kind=kind, engine=engine, engine_version=version,
                  verdict=verdict, signature=signature, fingerprint=fingerprint, detail=f"test: {verdict}",
                  versions=versions or {**FAKE_ENV, engine: version}, platform=platform, started=started,
                  duration=0.1, run="test-run")


def _add_alias(page: Path, alias: str) -> None:
    text = page.read_text(encoding="utf-8")
    end = text.index("\n---\n", 4)
    page.write_text(f"{text[:end]}\naliases: [{alias}]{text[end:]}", encoding="utf-8")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("site")
    root, store = tmp / "corpus", RecordStore(tmp / "records")
    shutil.copytree(REPO / "repros", root / "repros", ignore=shutil.ignore_patterns("__pycache__"))
    repros = root / "repros"

    # KB001: affected on 3.5.0, fixed on 3.7.0, accepted through the same writer `kb accept` uses.
    slug = ALIAS[0]
    _add_alias(repros / slug / "README.md", ALIAS[1])
    (repros / slug / "expected.yaml").unlink()
    history = []
    for version, bug, started in (("3.5.0", "reproduces", T0 - timedelta(days=30)), ("3.7.0", "fixed", T0)):
        history += [record(slug, "convert-default-flags", "bug", "mnn", version, bug, started=started,
                           signature="unsupported-op" if bug == "reproduces" else None),
                    record(slug, "convert-allow-custom-op", "bug", "mnn", version, bug, started=started,
                           signature="broadcast-error" if bug == "reproduces" else None),
                    record(slug, "export-standard-ops", "workaround", "mnn", version, "works", started=started)]
    expectations.accept(repros / slug / "expected.yaml", history)
    # The version between could not be installed for one check: a record only, never accepted.
    store.append(record(slug, "convert-default-flags", "bug", "mnn", "3.6.0", "unavailable",
                        started=T0 - timedelta(days=1)))

    # KB002: accepted "fixed" on 3.6.1; a newer record says it reproduces.
    store.append(record("mnn-grouped-convtranspose-bn-fusion", "grouped-bn", "bug", "mnn", "3.6.1",
                        "reproduces", signature="drift"))

    # KB003: one record per accepted observation, agreeing with it, on a made-up environment.
    slug = "mnn-qdq-input-permutation"
    for check, per in expectations.load(repros / slug / "expected.yaml").items():
        for version, exp in per.items():
            kind = "workaround" if exp.verdict in ("works", "broken") else "bug"
            store.append(record(slug, check, kind, "mnn", version, exp.verdict, signature=exp.signature,
                                fingerprint=exp.fingerprint))

    # KB005: nothing accepted.
    (repros / "mnn-multi-input-gru-quantization" / "expected.yaml").unlink()

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KB_ROOT", str(root))
        mp.setenv("KB_RECORDS", str(store.dir))
        return build_site(tmp / "site", docs_dir=tmp / "docs", strict=True)


def page(site: Path, slug: str) -> str:
    return (site / slug / "index.html").read_text(encoding="utf-8")


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def section(doc: str, anchor: str) -> str:
    """The HTML from the heading with this id to the next h2."""
    start = doc.index(f'id="{anchor}"')
    end = doc.find("<h2", start)
    return doc[start:end if end > 0 else None]


def status_cell(doc: str, check: str, version: str) -> str:
    row = re.search(rf'<tr data-check="{re.escape(check)}">(.*?)</tr>', doc, re.S).group(1)
    return re.search(rf'<td class="kb-cell" data-version="{re.escape(version)}"[^>]*>.*?</td>', row, re.S).group(0)


def history_cell(doc: str, check: str) -> str:
    row = re.search(rf'<tr data-check="{re.escape(check)}">(.*?)</tr>', doc, re.S).group(1)
    return re.search(r'<td class="kb-history".*?</td>', row, re.S).group(0)


def title_of(fragment: str) -> str:
    return html.unescape(re.search(r'title="([^"]*)"', fragment).group(1))


def badge(doc: str) -> str:
    return re.search(r'class="kb-badge kb-status-[\w-]+" data-status="([\w-]+)"', doc).group(1)


ENTRIES = load_all(REPO)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.meta.id)
def test_every_entry_has_a_page_at_its_slug_with_its_sections(site, entry):
    doc = page(site, entry.slug)
    h1 = re.search(r"<h1[^>]*>(.*?)</h1>", doc, re.S).group(1)
    assert entry.meta.id in text_of(h1)
    for anchor in ("status", "symptom", "cause", "workaround", "signatures", "trigger", "reproduce",
                   "reproducer", "checks"):
        assert f'id="{anchor}"' in doc, anchor
    # The page opens with the badge, then the status section, before the entry's own text.
    assert doc.index("kb-badge") < doc.index('id="status"') < doc.index('id="symptom"')
    commands = text_of(section(doc, "reproduce"))
    assert f"pytest repros/{entry.slug}\nkb check {entry.slug}" in commands
    for u in entry.meta.upstream:
        assert f'href="{u.url}"' in doc


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.meta.id)
def test_sources_are_included_from_the_files(site, entry):
    doc = page(site, entry.slug)
    for anchor, path in (("reproducer", entry.repro), ("checks", entry.test)):
        code = re.search(r"<code>(.*?)</code>", section(doc, anchor), re.S).group(1)
        assert text_of(code).strip() == path.read_text(encoding="utf-8").strip()


def test_status_fixed_with_first_fixed_and_last_affected_from_accepted_results(site):
    doc = page(site, ALIAS[0])
    assert badge(doc) == "fixed"
    assert 'data-verdict="reproduces"' in status_cell(doc, "convert-default-flags", "3.5.0")
    assert 'data-verdict="fixed"' in status_cell(doc, "convert-default-flags", "3.7.0")
    assert 'data-version="3.6.0"' not in section(doc, "status")  # not installable: no column, no verdict
    plain = history_cell(doc, "convert-allow-custom-op")
    assert 'data-last-affected="3.5.0" data-first-fixed="3.7.0" data-inferred="false"' in plain
    assert text_of(plain) == "Last affected 3.5.0, first fixed 3.7.0"
    # The same versions, but 3.6.0 was asked for and could not be measured: the fix is inferred.
    inferred = history_cell(doc, "convert-default-flags")
    assert 'data-first-fixed="3.7.0" data-inferred="true"' in inferred
    assert text_of(inferred) == "Last affected 3.5.0, first fixed 3.7.0 (inferred: 3.6.0 was not measured)"
    assert text_of(history_cell(doc, "export-standard-ops")) == "Works in every measured version (3.5.0 to 3.7.0)"
    observed = text_of(re.search(r'<p class="kb-observed">.*?</p>', doc, re.S).group(0))
    assert f"Observed between 2029-12-03 and 2030-01-02 on {FAKE_PLATFORM}" in observed
    assert "accepted observations in expected.yaml" in observed


def test_a_cell_is_the_verdict_and_signature_with_the_rest_in_its_tooltip(site):
    doc = page(site, "mnn-qdq-input-permutation")
    cell = status_cell(doc, "qdq-static", "3.6.1")
    assert text_of(re.sub(r"^<td[^>]*>", "", cell)) == "reproducesconv-shape-error"
    tip = title_of(cell)
    assert "2030-01-02" in tip and FAKE_PLATFORM in tip and "newest record, as accepted" in tip
    assert "test: reproduces" in tip  # the record's detail
    assert 'data-source="record"' in cell and 'data-changed="false"' in cell


def test_status_changed_when_the_newest_record_disagrees_with_the_accepted_one(site):
    doc = page(site, "mnn-grouped-convtranspose-bn-fusion")
    assert badge(doc) == "changed"
    cell = status_cell(doc, "grouped-bn", "3.6.1")
    assert 'data-verdict="reproduces"' in cell and 'data-changed="true"' in cell
    assert 'data-changed="false"' in status_cell(doc, "grouped-scale", "3.6.1")
    assert "kb accept" in doc


def test_status_and_environment_come_from_the_records(site):
    doc = page(site, "mnn-qdq-input-permutation")
    assert badge(doc) == "reproduces"
    assert 'data-verdict="reproduces"' in status_cell(doc, "qdq-static", "3.6.1")
    assert 'data-verdict="works"' in status_cell(doc, "mnn-weight-quant-bits", "3.6.1")
    assert FAKE_PLATFORM in text_of(section(doc, "status"))
    env = text_of(section(doc, "reproduce"))
    for key, value in FAKE_ENV.items():
        assert f"{key}{value}" in env.replace(" ", "").replace("\n", "")
    assert FAKE_PLATFORM in env


def test_status_from_accepted_results_only_and_unrun_checks(site):
    doc = page(site, "ncnn-onnx2ncnn-layernorm")
    assert badge(doc) == "reproduces"
    cell = status_cell(doc, "ncnn-pow-negative-base", "1.0.20261020")
    assert 'data-verdict="reproduces"' in cell and 'data-source="accepted"' in cell
    assert "accepted observation (expected.yaml)" in title_of(cell)
    row = re.search(r'<tr data-check="onnx2ncnn-channel-ln">(.*?)</tr>', doc, re.S).group(1)
    assert 'data-verdict="not-checked"' in row
    assert text_of(history_cell(doc, "onnx2ncnn-channel-ln")) == "Never observed"
    assert "No recorded run" in section(doc, "reproduce")


# ---------------------------------------------------------------- history, from made-up records

CHECKS = [Check(name="segfaults", kind="bug", engine="mnn", fn=print),
          Check(name="crashes", kind="bug", engine="mnn", fn=print),
          Check(name="exports-plain", kind="workaround", engine="mnn", fn=print, workaround="plain")]


def made_up_history() -> list[Record]:
    """Fixed, regressed, failing differently, then fixed with a version between unmeasured; a plain
    fix; and a workaround that stops working."""
    runs = {"segfaults": [("3.0.0", "fixed", None), ("3.2.0", "reproduces", "segfault"),
                          ("3.4.0", "reproduces", "wrong-output"), ("3.5.0", "unavailable", None),
                          ("3.6.0", "fixed", None)],
            "crashes": [("3.0.0", "reproduces", "segfault"), ("3.2.0", "fixed", None)],
            "exports-plain": [("3.0.0", "works", None), ("3.6.0", "broken", None)]}
    kinds = {c.name: c.kind for c in CHECKS}
    return [record("made-up", check, kinds[check], "mnn", v, verdict, signature=sig, started=T0 + timedelta(minutes=i))
            for check, seq in runs.items() for i, (v, verdict, sig) in enumerate(seq)]


def rendered_history(records: list[Record], table: expectations.Table | None = None) -> dict[str, str]:
    (es,) = derive(["mnn"], CHECKS, table or {}, records).engines
    doc = engine_table(es)
    return {c.name: text_of(history_cell(doc, c.name)) for c in CHECKS}


def test_history_wording_first_fixed_inferred_regression_and_shape_change():
    words = rendered_history(made_up_history())
    assert words["segfaults"] == ("Last affected 3.4.0, first fixed 3.6.0 (inferred: 3.5.0 was not measured); "
                                  "regressed in 3.2.0; fails differently from 3.4.0")
    assert words["crashes"] == "Last affected 3.0.0, first fixed 3.2.0"
    assert words["exports-plain"] == "Still broken in 3.6.0 (newest measured); stopped working in 3.6.0"


def test_history_is_kb_matrix_history_whether_recorded_or_accepted(tmp_path):
    """The site reads the same timelines as `kb matrix`, and accepting the records (then dropping
    them, as in a fresh clone) changes nothing but where the verdicts come from."""
    records = made_up_history()
    matrix = {t.check: t for t in timelines(records, "mnn")}
    (es,) = derive(["mnn"], CHECKS, {}, records).engines
    assert {cs.check.name: cs.timeline for cs in es.checks} == matrix
    expectations.accept(tmp_path / "expected.yaml", records)
    unmeasured = [r for r in records if r.verdict == "unavailable"]  # never accepted: they stay records
    (es,) = derive(["mnn"], CHECKS, expectations.load(tmp_path / "expected.yaml"), unmeasured).engines
    assert all(c.source == "accepted" for cs in es.checks for c in cs.cells.values())
    for cs in es.checks:
        got, want = cs.timeline, matrix[cs.check.name]
        assert (got.points, got.unmeasured, got.last_affected, got.first_fixed, got.inferred, got.regressions,
                got.shape_changes) == (want.points, want.unmeasured, want.last_affected, want.first_fixed,
                                       want.inferred, want.regressions, want.shape_changes)
    assert rendered_history(unmeasured, expectations.load(tmp_path / "expected.yaml")) == \
        rendered_history(records)


def test_changed_only_against_the_same_versions_accepted_result(tmp_path):
    crashes = [c for c in CHECKS if c.name == "crashes"]
    expectations.accept(tmp_path / "expected.yaml", [record("made-up", "crashes", "bug", "mnn", "3.6.1", "fixed")])
    table = expectations.load(tmp_path / "expected.yaml")
    newer = record("made-up", "crashes", "bug", "mnn", "3.7.0", "reproduces", signature="segfault")
    st = derive(["mnn"], crashes, table, [newer])
    assert not st.engines[0].checks[0].cells["3.7.0"].changed and st.status == "reproduces"
    assert "not accepted yet" in title_of(status_cell(engine_table(st.engines[0]), "crashes", "3.7.0"))
    same = record("made-up", "crashes", "bug", "mnn", "3.6.1", "reproduces", signature="segfault")
    st = derive(["mnn"], crashes, table, [same])
    cell = status_cell(engine_table(st.engines[0]), "crashes", "3.6.1")
    assert st.status == "changed" and 'data-changed="true"' in cell and ">changed<" in cell
    assert "disagrees with the one accepted 2030-01-02: fixed;" in title_of(cell)


def test_status_not_yet_checked(site):
    assert badge(page(site, "mnn-multi-input-gru-quantization")) == "not-checked"


def test_home_lists_every_entry_with_status_engines_and_tags(site):
    home = (site / "index.html").read_text(encoding="utf-8")
    want = {ALIAS[0]: "fixed", "mnn-grouped-convtranspose-bn-fusion": "changed",
            "mnn-qdq-input-permutation": "reproduces", "ncnn-onnx2ncnn-layernorm": "reproduces",
            "mnn-multi-input-gru-quantization": "not-checked"}
    for e in ENTRIES:
        row = re.search(rf'<tr class="kb-entry" data-slug="{e.slug}"[^>]*>(.*?)</tr>', home, re.S)
        attrs = html.unescape(row.group(0))
        assert json.dumps(e.meta.engines) in attrs and json.dumps(e.meta.tags) in attrs
        assert f'data-status="{want[e.slug]}"' in attrs
        assert e.meta.id in row.group(1) and f'href="{e.slug}/"' in row.group(1)
    for select in ("engine", "tag", "status"):
        assert f'id="kb-filter-{select}"' in home


def test_trigger_patterns_are_drawn_as_svg(site):
    trigger = section(page(site, "mnn-grouped-convtranspose-bn-fusion"), "trigger")
    svgs = re.findall(r'<svg class="kb-pattern-svg".*?</svg>', trigger, re.S)
    assert len(svgs) == 2
    assert all("marker-end" in s for s in svgs)
    assert ">ConvTranspose<" in svgs[0] and ">BatchNormalization<" in svgs[0] and "group &gt; 1<" in svgs[0]
    assert ">Mul<" in svgs[1] and "input 1 ← constant" in svgs[1]


def test_svg_layout_is_layered_and_survives_cycles():
    diamond = Pattern(name="d", summary="s", nodes={"a": {}, "b": {}, "c": {}, "d": {"op": "Add"}},
                      edges=[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    assert layers(diamond) == {"a": 0, "b": 1, "c": 1, "d": 2}
    loop = Pattern(name="l", summary="s", nodes={"a": {}, "b": {}}, edges=[("a", "b"), ("b", "a")])
    assert set(layers(loop).values()) <= {0, 1}
    assert draw(loop).count("<path class=\"kb-edge\"") == 2


def test_alias_redirects_to_the_renamed_entry(site):
    redirect = (site / ALIAS[1] / "index.html").read_text(encoding="utf-8")
    assert f'url=../{ALIAS[0]}/"' in redirect.replace("'", '"')
    assert f'location.href="../{ALIAS[0]}/"+(anchor' in redirect  # anchors are carried over


def test_an_alias_may_not_take_another_entrys_address():
    from kb.errors import KBError

    a, b = ENTRIES[0], ENTRIES[1]
    clash = type(a)(a.slug, a.dir, a.meta.model_copy(update={"aliases": [b.slug]}), a.body)
    with pytest.raises(KBError, match="already the address"):
        _redirects([clash, b])


def test_search_index_holds_every_signature_example_on_its_entry(site):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    mkdocs_yml = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert index["config"]["separator"] in mkdocs_yml.replace("''", "'")  # the custom tokenizer is in use
    docs = index["docs"]
    for e in ENTRIES:
        for sig in e.meta.signatures:
            if not sig.example:
                continue
            hits = [d for d in docs if d["location"] == f"{e.slug}/#sig-{sig.id}"]
            assert hits, (e.slug, sig.id)
            assert text_of(hits[0]["title"]) == sig.example  # a heading: the title field is boosted
            assert sig.example in text_of(hits[0]["text"])  # and its code block
    # Sources are excluded so identifiers in code cannot outrank real log lines.
    assert not [d for d in docs if d["location"].endswith(("#reproducer", "#checks"))]
    assert not [d for d in docs if d["location"] in ("", "index.html")]  # the home page is not a hit


def test_works_offline(site):
    remote = re.compile(r'<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)="(?:https?:)?//', re.I)
    for path in site.rglob("*.html"):
        doc = path.read_text(encoding="utf-8")
        assert not remote.search(doc), path
        assert "fonts.googleapis" not in doc and "googletagmanager" not in doc, path
