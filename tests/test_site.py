"""The documentation site, built (strict) from the fixture corpus (tests/corpus) with made-up records.

The copy gets a known history, so every status the pages show can be checked against its source:
  KB901  accepted on two onnxruntime versions, affected then fixed; renamed (an alias to redirect);
         one check could not be measured on the version between (its fix is inferred)
  KB902  a regression guard; a new record disagrees with the accepted verdict   -> changed
  KB903  records agree with the accepted verdict, on a fake env                 -> reproduces, env from
         records; one record's detail holds markup and blank lines (escaping)
Statuses from accepted results only, and an entry with nothing accepted, are rendered from a fresh
fixture corpus (the `fixture_corpus` / `fixture_entry` fixtures of conftest.py).
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
from kb.checks import Check
from kb.entries import load_all
from kb.history import timelines
from kb.pattern import Pattern
from kb.records import Record, RecordStore
from kb.site import build_site
from kb.site.generate import _redirects, render
from kb.site.pages import home_page
from kb.status import engine_status
from kb.site.svg import draw, layers
from kb.site.table import engine_table
from kb.status import STATUS_LABEL, derive

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "corpus"
GUARD, CUSTOM, NAN = "fake-silu-guard", "fake-custom-op-broadcast", "fake-pow-nan"
ALIAS = (CUSTOM, "fake-custom-op-old-name")
FAKE_ENV = {"torch": "9.9.9+fake", "onnx": "8.8.8", "onnxruntime": "1.32.0", "python": "3.11.99"}
FAKE_PLATFORM = "FakeOS-riscv64 (cpython 3.11.99)"
HOSTILE = 'got <script>alert("x")</script> & more\n\nafter a blank line'
T0 = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def record(entry: str, check: str, kind: str, engine: str, version: str, verdict: str, *, signature=None,
           fingerprint=None, started=T0, versions=None, platform=FAKE_PLATFORM, detail=None) -> Record:
    return Record(id=Record.new_id(), entry=entry, check=check, kind=kind, engine=engine, engine_version=version,
                  verdict=verdict, signature=signature, fingerprint=fingerprint,
                  detail=detail or f"test: {verdict}", versions=versions or {**FAKE_ENV, engine: version},
                  platform=platform, started=started, duration=0.1, run="test-run")


def _add_front_matter(page: Path, line: str) -> None:
    text = page.read_text(encoding="utf-8")
    end = text.index("\n---\n", 4)
    page.write_text(f"{text[:end]}\n{line}{text[end:]}", encoding="utf-8")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("site")
    root, store = tmp / "corpus", RecordStore(tmp / "records")
    shutil.copytree(FIXTURES / "repros", root / "repros", ignore=shutil.ignore_patterns("__pycache__"))
    repros = root / "repros"

    # KB901: affected on 1.29.0, fixed on 1.32.0, accepted through the same writer `kb accept` uses.
    _add_front_matter(repros / CUSTOM / "README.md", f"aliases: [{ALIAS[1]}]")
    (repros / CUSTOM / "expected.yaml").unlink()
    history = []
    for version, bug, started in (("1.29.0", "reproduces", T0 - timedelta(days=30)), ("1.32.0", "fixed", T0)):
        history += [record(CUSTOM, "convert", "bug", "onnxruntime", version, bug, started=started,
                           signature="broadcast-error" if bug == "reproduces" else None),
                    record(CUSTOM, "standard-ops", "workaround", "onnxruntime", version, "works", started=started)]
    expectations.accept(repros / CUSTOM / "expected.yaml", history)
    # The version between could not be installed: a record only, never accepted.
    store.append(record(CUSTOM, "convert", "bug", "onnxruntime", "1.30.0", "unavailable",
                        started=T0 - timedelta(days=1)))

    # KB902: accepted "fixed" on 1.32.0; a newer record says it reproduces.
    store.append(record(GUARD, "silu", "bug", "onnxruntime", "1.32.0", "reproduces", signature="drift"))

    # KB903: a record per accepted observation, agreeing with it, on a made-up environment; and one
    # on a newer version whose detail is hostile markup with a blank line.
    for check, per in expectations.load(repros / NAN / "expected.yaml").items():
        for version, exp in per.items():
            store.append(record(NAN, check, "bug", "onnxruntime", version, exp.verdict, signature=exp.signature,
                                fingerprint=exp.fingerprint))
    store.append(record(NAN, "sqrt", "bug", "onnxruntime", "1.33.0", "reproduces", signature="all-nan",
                        detail=HOSTILE, started=T0 + timedelta(hours=1)))

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


def row_of(doc: str, check: str) -> str:
    """The status table's row holding this check (checks with the same results share a row)."""
    return next(m.group(2) for m in re.finditer(r'<tr data-checks="([^"]*)"[^>]*>(.*?)</tr>', doc, re.S)
                if check in m.group(1).split())


def status_cell(doc: str, check: str, version: str) -> str:
    """The cell of the column holding this release (releases with the same results share a column)."""
    return next(m.group(0) for m in re.finditer(r'<td class="kb-cell" [^>]*data-versions="([^"]*)"[^>]*>.*?</td>',
                                                row_of(doc, check), re.S) if version in m.group(1).split())


def history_cell(doc: str, check: str) -> str:
    return re.search(r'<td class="kb-history".*?</td>', row_of(doc, check), re.S).group(0)


def title_of(fragment: str) -> str:
    return html.unescape(re.search(r'title="([^"]*)"', fragment).group(1))


def badge(doc: str) -> str:
    return re.search(r'class="kb-badge kb-status-[\w-]+" data-status="([\w-]+)"', doc).group(1)


ENTRIES = load_all(FIXTURES)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.meta.id)
def test_every_entry_has_a_page_at_its_slug_with_its_sections(site, entry):
    doc = page(site, entry.slug)
    h1 = re.search(r"<h1[^>]*>(.*?)</h1>", doc, re.S).group(1)
    assert entry.meta.id in text_of(h1)
    for anchor in ("status", "symptom", "signatures", "trigger", "reproduce", "reproducer", "checks"):
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


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.meta.id)
def test_chinese_summary_and_synonyms_are_shown_and_searched(site, entry):
    doc = page(site, entry.slug)
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    mine = [d for d in index["docs"] if d["location"].startswith(f"{entry.slug}/")]
    indexed = " ".join(text_of(d["title"] + " " + d["text"]) for d in mine).replace("\u200b", "")
    zh = entry.meta.zh
    if zh is None:
        assert 'id="zh"' not in doc
    else:
        shown = text_of(section(doc, "zh"))
        for text in (zh.title, zh.symptom, zh.cause, zh.workaround):
            assert " ".join(text.split()) in shown  # visible, and escaped: markup in it is text
            assert "".join(text.split()) in "".join(indexed.split())
        assert "<b>" not in section(doc, "zh")
    if not entry.meta.synonyms:
        assert 'id="aka"' not in doc
    aka = text_of(re.search(r'<h3 [^>]*id="aka".*?</h3>', doc, re.S).group(0)) if entry.meta.synonyms else ""
    for word in entry.meta.synonyms:
        assert word in aka and word in indexed


def test_a_message_pages_chinese_summary_and_synonyms_are_shown_and_searched(site):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))

    def indexed(mid: str) -> str:
        return "".join(text_of(d["title"] + d["text"]) for d in index["docs"]
                       if d["location"].startswith(f"messages/{mid}/")).replace("\u200b", "").replace(" ", "")

    assert 'class="kb-aka"' not in page(site, "messages/fake-op-not-support")  # none given: no empty line
    assert 'class="kb-zh"' not in page(site, "messages/fake-op-not-support")
    doc = page(site, "messages/fake-broadcast-error")
    for text in ("broadcast dims <b>differ</b>", "广播 维度 不一致", "两个输入的形状无法广播：<i>先</i>检查导出时的形状。"):
        assert text in text_of(doc) and text.replace(" ", "") in indexed("fake-broadcast-error")
    assert "<b>differ" not in doc and "<i>先" not in doc  # escaped: markup in the data is text


def test_a_message_example_is_shown_verbatim():
    """ncnn's `extract 'out0' failed with -100`: quotes and brackets in a fence are text, not &#39;."""
    from kb.schema import Message
    from kb.site.messages import message_page

    m = Message(id="x-quoted", engines=["ncnn"], pattern="extract .*failed", example="ncnn: extract 'out0' <b> failed",
                summary="s", generic=True)
    text = message_page(m, [], {})
    assert "ncnn: extract 'out0' <b> failed\n```" in text and "&#39;" not in text


def test_a_generic_message_with_one_known_cause_says_it_in_the_singular():
    """'1 known cause print it, so seeing it alone names none of them' read wrong (ncnn-invalid-blob-count)."""
    from kb.schema import Message
    from kb.site.messages import message_page

    m = Message(id="x-one", engines=["ncnn"], pattern="x", example="x", summary="s", generic=True,
                causes=[{"ref": "Tencent/ncnn#1", "cause": "c"}])
    text = message_page(m, [], {})
    assert "1 known cause prints it, and others may too" in text and "none of them" not in text, text


def test_search_is_configured_for_chinese():
    import jieba  # noqa: F401  mkdocs-material segments Chinese only when jieba is installed

    mkdocs_yml = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert "lang: [en, zh]" in mkdocs_yml and r"\u200b" in mkdocs_yml


def test_status_fixed_with_first_fixed_and_last_affected_from_accepted_results(site):
    doc = page(site, ALIAS[0])
    assert badge(doc) == "fixed"
    assert 'data-label="reproduces"' in status_cell(doc, "convert", "1.29.0")
    assert 'data-label="fixed"' in status_cell(doc, "convert", "1.32.0")
    assert "1.30.0" not in re.findall(r'data-versions="([^"]*)"', section(doc, "status"))  # not installable
    # newest release first
    assert re.findall(r'<th class="kb-version"[^>]*>([^<]*)</th>', doc) == ["1.32.0", "1.29.0"]
    inferred = history_cell(doc, "convert")
    assert 'data-last-affected="1.29.0" data-first-fixed="1.32.0" data-inferred="true"' in inferred
    assert text_of(inferred) == "Last affected 1.29.0, first fixed 1.32.0 (inferred: 1.30.0 was not measured)"
    assert text_of(history_cell(doc, "standard-ops")) == "Works in every measured version (1.29.0 to 1.32.0)"
    observed = text_of(re.search(r'<p class="kb-observed">.*?</p>', doc, re.S).group(0))
    assert f"Measured between 2029-12-03 and 2030-01-02 on {FAKE_PLATFORM}" in observed
    work = re.search(r'<tr data-workaround="standard-ops">.*?</tr>', doc, re.S).group(0)
    assert "<code>standard-ops</code>" in work and 'kb-v-works' in work


def test_a_cell_is_the_verdict_and_signature_with_the_rest_in_its_tooltip(site):
    doc = page(site, NAN)
    cell = status_cell(doc, "sqrt", "1.32.0")
    assert text_of(re.sub(r"^<td[^>]*>", "", cell)) == "reproduces all-nan"
    tip = title_of(cell)
    assert "2030-01-02" in tip and FAKE_PLATFORM in tip
    # 1.32.0 and 1.33.0 read the same, so they share a column; the tooltip gives both dates and the
    # newest release's detail
    assert "reproduces [all-nan] on onnxruntime 1.32.0–1.33.0" in tip and f"measured 2030-01-02 on {FAKE_PLATFORM}" in tip
    assert "after a blank line" in tip
    assert "accepted" not in tip and "data-source" not in cell  # where a verdict came from is kb check's


def test_record_text_is_escaped_and_stays_in_its_html_block(site):
    doc = page(site, NAN)
    assert "<script>alert" not in doc
    cell = status_cell(doc, "sqrt", "1.33.0")
    assert " ".join(HOSTILE.split()) in title_of(cell)  # on one line: a blank line would end the raw block
    # The whole table survived: each version has its cell, and the table closes inside its wrapper.
    table = re.search(r'<div class="kb-status-table".*?</table>\s*</div>', doc, re.S).group(0)
    assert table.count('<td class="kb-cell"') == 1 and "<p>" not in table  # 1.32.0 and 1.33.0 share a column
    assert 'data-versions="1.33.0 1.32.0"' in table


def test_a_record_that_disagrees_with_the_accepted_one_shows_what_it_measured_not_a_review_state(site):
    """"changed" is for maintainers (kb check): the page says what the newest measurement found."""
    doc = page(site, GUARD)
    assert badge(doc) == "reproduces"
    cell = status_cell(doc, "silu", "1.32.0")
    assert 'data-label="reproduces"' in cell
    shown = text_of(re.sub(r"<script.*?</script>", "", doc, flags=re.S))
    for word in ("changed", "kb accept", "expected.yaml", "kb matrix", "differs"):
        assert word not in text_of(section(doc, "status")) and word not in text_of(
            re.search(r'<p class="kb-headline">.*?</p>', doc, re.S).group(0)), word
    assert "kb accept" not in shown
    # The declared guard keeps its note, which says what the checks say now.
    guard = text_of(re.search(r'<p class="kb-guard">.*?</p>', doc, re.S).group(0))
    assert f"its checks now say: {STATUS_LABEL['reproduces']}" in guard
    assert "Upstream fixed it in 1.0.0 (example/fake#2)." in guard
    assert 'href="https://github.com/example/fake/issues/2"' in doc


def test_status_and_environment_come_from_the_records(site):
    doc = page(site, NAN)
    assert badge(doc) == "reproduces"
    assert FAKE_PLATFORM in text_of(section(doc, "status"))
    env = text_of(section(doc, "reproduce"))
    for key, value in FAKE_ENV.items():
        if key != "onnxruntime":  # the newest record ran on 1.33.0
            assert f"{key}{value}" in env.replace(" ", "").replace("\n", "")
    assert FAKE_PLATFORM in env


def test_status_from_accepted_results_only(fixture_corpus):
    site = render(fixture_corpus, fixture_corpus / ".kb" / "records")
    doc = site.pages[f"{NAN}.md"]
    assert badge(doc) == "reproduces"
    cell = status_cell(doc, "sqrt", "1.32.0")
    assert 'data-label="reproduces"' in cell and "2030" not in title_of(cell)
    assert "No recorded run" in doc
    assert badge(site.pages[f"{GUARD}.md"]) == "fixed"
    guard = text_of(re.search(r'<p class="kb-guard">.*?</p>', site.pages[f"{GUARD}.md"], re.S).group(0))
    assert "guards against a regression" in guard


def test_status_not_yet_checked_and_a_never_run_check(fixture_entry, corpus):
    (fixture_entry(NAN) / "expected.yaml").unlink()
    store = RecordStore(corpus / ".kb" / "records")
    store.append(record(NAN, "sqrt", "bug", "onnxruntime", "1.32.0", "skipped", detail="onnxruntime missing"))
    doc = render(corpus, store.dir).pages[f"{NAN}.md"]
    assert badge(doc) == "not-checked"
    row = row_of(doc, "sqrt")
    assert 'data-label="not measured"' in row and "onnxruntime missing" in text_of(row)
    assert text_of(history_cell(doc, "sqrt")) == "No version measured"  # asked for, never measured
    assert "nothing about this entry has been accepted yet either" in doc


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
    same = record("made-up", "crashes", "bug", "mnn", "3.6.1", "reproduces", signature="segfault")
    st = derive(["mnn"], crashes, table, [same])
    assert st.status == "changed"  # for kb check; the page's table shows only what was measured
    cell = status_cell(engine_table(st.engines[0]), "crashes", "3.6.1")
    assert 'data-label="reproduces"' in cell and "changed" not in cell and "accepted" not in title_of(cell)


def test_home_lists_every_entry_with_status_engines_and_tags(site):
    home = (site / "index.html").read_text(encoding="utf-8")
    want = {CUSTOM: "fixed", GUARD: "reproduces", NAN: "reproduces"}  # never "changed": that is kb check's
    for e in ENTRIES:
        row = re.search(rf'<tr class="kb-entry" data-slug="{e.slug}"[^>]*>(.*?)</tr>', home, re.S)
        attrs = html.unescape(row.group(0))
        assert json.dumps(e.meta.engines) in attrs and json.dumps(e.meta.tags) in attrs
        assert f'data-status="{want[e.slug]}"' in attrs
        assert e.meta.id in row.group(1) and f'href="{e.slug}/"' in row.group(1)
        assert badge(row.group(1)) == want[e.slug]
    for select in ("engine", "tag", "status"):
        assert f'id="kb-filter-{select}"' in home
    statuses = re.search(r'<select id="kb-filter-status".*?</select>', home, re.S).group(0)
    assert set(re.findall(r'<option value="([\w-]+)">', statuses)) == set(want.values())
    assert f'>{STATUS_LABEL["not-checked"]}<' not in statuses  # only statuses some entry is in


def test_home_shows_each_engines_status_of_a_multi_engine_entry(fixture_entry, corpus):
    """One engine's checks reproduce, another's fail differently, a third's only workaround works."""
    entry = load_all(corpus if fixture_entry(CUSTOM) else corpus)[0]
    entry = type(entry)(entry.slug, entry.dir, entry.meta.model_copy(update={"engines": ["mnn", "ncnn", "pnnx"]}),
                        entry.body)
    checks = [Check(name="on-mnn", kind="bug", engine="mnn", fn=print),
              Check(name="on-ncnn", kind="bug", engine="ncnn", fn=print),
              Check(name="pnnx-route", kind="workaround", engine="pnnx", fn=print, workaround="standard-ops")]
    records = [record(CUSTOM, "on-mnn", "bug", "mnn", "3.6.1", "reproduces", signature="broadcast-error"),
               record(CUSTOM, "on-ncnn", "bug", "ncnn", "1.0.1", "differs", fingerprint="exit 3"),
               record(CUSTOM, "pnnx-route", "workaround", "pnnx", "2.0", "works")]
    st = derive(entry.meta.engines, checks, {}, records)
    assert [engine_status(es) for es in st.engines] == ["reproduces", "differs", "workaround-works"]
    home = home_page([(entry, st)])
    row = re.search(r'<tr class="kb-entry".*?</tr>', home, re.S).group(0)
    shown = re.findall(r'<li class="kb-engine-status" data-engine="([\w-]+)" data-status="([\w-]+)">(.*?)</li>', row)
    assert [(e, s, text_of(t)) for e, s, t in shown] == [
        ("mnn", "reproduces", "mnn reproduces"), ("ncnn", "differs", "ncnn fails differently"),
        ("pnnx", "workaround-works", "pnnx workaround works")]
    assert json.loads(html.unescape(re.search(r'data-engine-statuses="([^"]*)"', row).group(1))) == {
        "mnn": "reproduces", "ncnn": "differs", "pnnx": "workaround-works"}
    options = re.search(r'<select id="kb-filter-status".*?</select>', home, re.S).group(0)
    assert set(re.findall(r'<option value="([\w-]+)">', options)) == {"reproduces", "differs", "workaround-works"}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.meta.id)
def test_trigger_patterns_are_drawn_as_svg(site, entry):
    from kb.site.svg import op_label, predicates

    trigger = section(page(site, entry.slug), "trigger")
    svgs = re.findall(r'<svg class="kb-pattern-svg".*?</svg>', trigger, re.S)
    assert len(svgs) == len(entry.meta.trigger)
    for svg, p in zip(svgs, entry.meta.trigger):
        assert all("marker-end" in path for path in re.findall(r'<path class="kb-edge".*?</path>', svg, re.S))
        assert svg.count('<path class="kb-edge"') == len(p.edges)
        for spec in p.nodes.values():
            assert f">{html.escape(op_label(spec), quote=False)}<" in svg
            assert all(f">{html.escape(line, quote=False)}<" in svg for line in predicates(spec))


def test_svg_layout_is_layered_survives_cycles_and_escapes():
    diamond = Pattern(name="d", summary="s", nodes={"a": {}, "b": {}, "c": {}, "d": {"op": "Add"}},
                      edges=[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    assert layers(diamond) == {"a": 0, "b": 1, "c": 1, "d": 2}
    loop = Pattern(name="l", summary="s", nodes={"a": {}, "b": {}}, edges=[("a", "b"), ("b", "a")])
    assert set(layers(loop).values()) <= {0, 1}
    assert draw(loop).count("<path class=\"kb-edge\"") == 2
    gt = Pattern(name="g", summary="<b>x</b> & y", nodes={"c": {"op": "Conv", "attrs": {"group": {"gt": 1}}}})
    svg = draw(gt)
    assert "group &gt; 1<" in svg and "&lt;b&gt;x&lt;/b&gt; &amp; y" in svg and "\n\n" not in svg


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
    # rel="canonical" names the published address (mkdocs.yml's site_url); the browser loads nothing from it
    remote = re.compile(r'<(?:script|link(?![^>]*rel="canonical")|img|iframe)\b[^>]*\b(?:src|href)="(?:https?:)?//',
                        re.I)
    for path in site.rglob("*.html"):
        doc = path.read_text(encoding="utf-8")
        assert not remote.search(doc), path
        assert "fonts.googleapis" not in doc and "googletagmanager" not in doc, path


def test_templates_ship_with_the_package():
    """pyproject's package-data glob covers every template the site renders."""
    import fnmatch
    import tomllib

    globs = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["kb"]
    templates = [p.relative_to(REPO / "kb").as_posix() for p in (REPO / "kb" / "templates" / "site").iterdir()]
    assert templates and all(any(fnmatch.fnmatch(t, g) for g in globs) for t in templates), templates


def test_the_first_lines_answer_is_my_version_affected_and_what_works(site):
    doc = page(site, ALIAS[0])  # KB901: reproduced on 1.29.0, fixed on 1.32.0; its workaround works
    answer = text_of(re.search(r'<div class="kb-answer">.*?</div>', doc, re.S).group(0))
    assert "onnxruntime 1.32.0: not affected · fixed in: 1.32.0 · measured: 1.29.0–1.32.0" in answer
    assert "Verified workaround (onnxruntime 1.32.0): Export the custom op's computation with standard ops." in answer
    assert doc.index('class="kb-answer"') < doc.index('id="status"')  # above the status tables


def test_the_status_table_is_newest_first_with_identical_rows_and_releases_grouped_and_a_legend():
    checks = [Check(name="case-a", kind="bug", engine="mnn", fn=print),
              Check(name="case-b", kind="bug", engine="mnn", fn=print),
              Check(name="other-model", kind="variant", engine="mnn", fn=print, variant="v"),
              Check(name="plain", kind="workaround", engine="mnn", fn=print, workaround="plain")]
    runs = []
    for i, v in enumerate(("3.0.0", "3.1.0", "3.2.0", "3.4.0")):
        bug = "reproduces" if v != "3.4.0" else "fixed"
        runs += [record("made-up", "case-a", "bug", "mnn", v, bug, signature="sig" if bug == "reproduces" else None,
                        started=T0 + timedelta(minutes=i)),
                 record("made-up", "case-b", "bug", "mnn", v, bug, signature="sig" if bug == "reproduces" else None,
                        started=T0 + timedelta(minutes=i)),
                 record("made-up", "other-model", "variant", "mnn", v, "differs", fingerprint="exit 3",
                        started=T0 + timedelta(minutes=i)),
                 record("made-up", "plain", "workaround", "mnn", v, "works", started=T0 + timedelta(minutes=i))]
    (es,) = derive(["mnn"], checks, {}, runs).engines
    doc = engine_table(es)
    # newest first; 3.0.0-3.2.0 read the same, so they share a column
    heads = re.findall(r'<th class="kb-version"[^>]*data-versions="([^"]*)">([^<]*)</th>', doc)
    assert heads == [("3.4.0", "3.4.0"), ("3.2.0 3.1.0 3.0.0", "3.0.0–3.2.0")]
    # the two bug checks with the same results share a row; the kinds keep rows of their own
    assert re.findall(r'<tr data-checks="([^"]*)"', doc) == ["case-a case-b", "other-model", "plain"]
    assert "2 reported cases" in text_of(row_of(doc, "case-b"))
    cells = re.findall(r'data-label="([^"]*)"', row_of(doc, "other-model"))
    assert cells == ["fails differently", "fails differently"]  # the public label, not "differs"
    legend = dict(re.findall(r'<li data-label="([^"]*)">.*?: ([^<]*)</li>', doc))
    assert set(legend) == {"reproduces", "fixed", "fails differently", "works"}
    assert "differs" not in text_of(doc) and "accepted" not in doc and "kb accept" not in doc


def test_an_entry_page_links_the_op_pages_of_its_triggers_ops(fixture_corpus):
    """An entry's trigger names ONNX ops: the page links each op's page (onnx's own node tests on every engine),
    only where a ledger gave the op one."""
    from kb.site.generate import render as render_site

    assert "kb-op-links" not in render_site(fixture_corpus).pages[f"{NAN}.md"]  # no ledger, no op page
    shutil.copytree(REPO / "conformance", fixture_corpus / "conformance")
    site = render_site(fixture_corpus)
    links = re.findall(r'<a href="\.\./ops/(\w+)/" data-op', site.pages[f"{NAN}.md"])
    assert links[:2] == ["Sub", "Sqrt"] and all(f"ops/{op}.md" in site.pages for op in links)
    guard = site.pages[f"{GUARD}.md"]
    assert re.search(r"ONNX's own tests of its ops on each engine: .*\bSigmoid\b.*\bMul\b", guard)
    # a ledger with Sub's cases only: Sqrt has no page, so no link
    shutil.rmtree(fixture_corpus / "conformance")
    (fixture_corpus / "conformance").mkdir()
    (fixture_corpus / "conformance" / "onnx2ncnn.yaml").write_text(
        "engine: onnx2ncnn\nprovenance:\n  p1: {date: '2026-11-28', platform: p, onnx: 1.23.2}\ncases:\n"
        "  test_sub: {op: Sub, runs: [{versions: [a4d2ea1], outcome: works, seen: p1}]}\n", encoding="utf-8")
    page = render_site(fixture_corpus).pages[f"{NAN}.md"]
    assert re.findall(r'<a href="\.\./ops/(\w+)/" data-op', page) == ["Sub"]
    assert "ONNX's own tests of Sub on each engine: " in page and ">/ops/Sub/</a>" in page


def test_a_message_that_an_engine_lacks_an_op_shows_the_ops_node_tests_there():
    """onnx2ncnn's `<op> not supported yet!` names an op: the page gives, for the op of its example and those its
    causes name, how many of onnx's node tests of the op work on onnx2ncnn and how the others fail, with a link
    to the op page; ncnn's `layer <type> not exists or registered` does so on both paths that run on ncnn. A
    message that names no op has no such table."""
    from kb import messages
    from kb.site.messages import message_page
    from kb.site.ops import Conformance

    tables = Conformance.load(REPO).tables
    msg = messages.load(REPO / "repros" / "_messages" / "onnx2ncnn-not-supported.yaml")
    text = message_page(msg, [], {}, tables)
    rows = re.findall(r'<tr data-op="(\w+)" data-engine="(\w+)"', text)
    assert rows[0] == ("LayerNormalization", "onnx2ncnn")  # the example's op first, then the causes'
    assert ("Einsum", "onnx2ncnn") in rows and ("Sign", "onnx2ncnn") in rows and {e for _, e in rows} == {"onnx2ncnn"}
    gather = re.search(r'<tr data-op="Gather".*', text)[0]
    assert '<a href="../../ops/Gather/">Gather</a>' in gather
    assert re.search(r"<td>0 of \d+</td><td>\d+ fail to convert: <code>[^<]*Gather not supported yet!</code>", gather)
    assert '<tr data-op="Pad"' in text and '<tr data-op="Nihui"' not in text  # only ops with node tests
    layer = messages.load(REPO / "repros" / "_messages" / "ncnn-layer-not-registered.yaml")
    rows = re.findall(r'<tr data-op="(\w+)" data-engine="(\w+)"', message_page(layer, [], {}, tables))
    assert ("LayerNormalization", "onnx2ncnn") in rows and ("LayerNormalization", "pnnx") in rows
    broadcast = messages.load(REPO / "repros" / "_messages" / "mnn-broadcast-error.yaml")
    assert "kb-message-ops" not in message_page(broadcast, [], {}, tables)
    assert "kb-message-ops" not in message_page(msg, [], {})  # no ledger, no table


def test_a_messages_unsupported_op_must_name_the_op_of_its_example():
    from pydantic import ValidationError

    from kb.schema import Message

    base = dict(id="x-op", engines=["onnx2ncnn"], pattern="not supported yet", example="Sign not supported yet!",
                summary="s", generic=True)
    assert Message(**base, unsupported_op=r"(\w+) not supported yet").unsupported_op
    for bad in (r"\w+ not supported yet", r"(\w+) is missing", "(unclosed"):
        with pytest.raises(ValidationError):
            Message(**base, unsupported_op=bad)


def test_op_pages_are_in_the_search_boxs_index(fixture_corpus):
    """The box ranks a query's words with kb-data.js's table (kb.match.words.SiteIndex): the op pages are in it,
    found by the op's name and about every engine measured on it, so "ncnn GridSample" and "MNN Einsum 支持"
    list /ops/GridSample/ and /ops/Einsum/, after the entries about the op. lunr indexes them too (no exclude)."""
    from kb import messages
    from kb.match.words import SiteIndex
    from kb.site import ops
    from kb.site.generate import render as render_site

    shutil.copytree(REPO / "conformance", fixture_corpus / "conformance")
    site = render_site(fixture_corpus)
    script = site.scripts["assets/kb-data.js"]
    words = json.loads(script.split("window.kbData = ", 1)[1].rstrip().rstrip(";"))["words"]
    at = words["pages"].index("ops/GridSample/")
    assert set(words["engines"][at]) == {"mnn", "onnx2ncnn", "pnnx", "ncnn"}
    assert any(i == at for i, _ in words["weights"]["gridsample"]) and "ops/Einsum/" in words["pages"]
    assert "exclude" not in site.pages["ops/GridSample.md"].split("\n---\n", 1)[0]

    entries = load_all(REPO, broken=[])
    index = SiteIndex(entries, messages.load_all(REPO, entries), ops.search_pages(ops.Conformance.load(REPO)))
    for query, page in (("ncnn GridSample", "ops/GridSample/"), ("MNN Einsum 支持", "ops/Einsum/")):
        ranked = index.rank(query)
        assert page in ranked, (query, ranked)
        assert not ranked[0].startswith("ops/")  # an entry or message about the op first
    assert index.rank("acosh") == ["ops/Acosh/"]  # an op no other page names (torch's op pages are not in the box)


def test_prose_escapes_html_but_leaves_code_spans_as_written():
    """A message's summary is Markdown prose: HTML outside code spans is escaped; inside, Markdown shows the text
    literally, so escaping it there showed `Can&#39;t` and `&lt;name&gt;` on the page."""
    from kb.site.markup import md_text

    assert str(md_text("a <b> `Can't <name> & x` & <script>")) == "a &lt;b&gt; `Can't <name> & x` &amp; &lt;script&gt;"
