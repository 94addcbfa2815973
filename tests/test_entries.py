"""A broken entry is reported on one line naming its file and field; `kb new` scaffolds a loadable one."""

import os
import re
import subprocess
import sys

import pytest

from kb.checks import load_checks
from kb.entries import load_all, load_entry
from kb.errors import KBError

GUARD = "fake-silu-guard"  # KB902, the smallest fixture entry


def test_the_corpus_loads(fixture_corpus):
    entries = load_all()
    assert {"KB901", "KB902", "KB903"} <= {e.meta.id for e in entries}
    assert len({e.meta.id for e in entries}) == len(entries)
    for e in entries:
        load_checks(e)  # checks name only declared signatures, workarounds and engines


def edit_page(folder, old, new):
    page = folder / "README.md"
    text = page.read_text()
    assert old in text
    page.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("old, new, problem", [
    ("id: KB902", "id: 902", "field 'id'"),
    ("symptom: wrong-output", "symptom: sad", "field 'symptom'"),
    ("    kind: mismatch", "    kind: smell", "field 'signatures.0.kind'"),
    ("engines: [onnxruntime]", "engines: [onnxruntime", "front matter is not valid YAML"),
    ("engines: [onnxruntime]", "engines: [tensorrt]", "unknown engine 'tensorrt'"),
    ("    edges: [[sigmoid, mul]]", "    edges: [[sigmoid, nope]]", "edge names unknown node"),
    ("symptom: wrong-output", "symptom: wrong-output\nsynonyms: [silu, '//']", "field 'synonyms.1'"),  # unsearchable
])
def test_broken_front_matter(fixture_entry, old, new, problem):
    folder = fixture_entry(GUARD)
    edit_page(folder, old, new)
    with pytest.raises(KBError) as e:
        load_entry(folder)
    assert "README.md" in str(e.value) and problem in str(e.value)
    assert "\n" not in str(e.value)


_TRIGGER = """trigger:
  - name: silu
    summary: Sigmoid feeding a Mul
    nodes:
      sigmoid: {op: Sigmoid}
      mul: {op: Mul}
    edges: [[sigmoid, mul]]
"""


@pytest.mark.parametrize("new, problem", [
    ("", "an engine bug needs at least one pattern"),
    (_TRIGGER + "untriggered: no graph shows it\n", "untriggered: an entry with a trigger pattern"),
    ("untriggered: no graph property predicts it\n", None),
])
def test_an_engine_bug_has_a_trigger_or_says_why_none_predicts_it(fixture_entry, new, problem):
    folder = fixture_entry(GUARD)
    edit_page(folder, _TRIGGER, new)
    if problem is None:
        assert load_entry(folder).meta.untriggered and not load_entry(folder).meta.trigger
        return
    with pytest.raises(KBError) as e:
        load_entry(folder)
    assert problem in str(e.value)


def test_log_signature_must_match_its_example(fixture_entry):
    folder = fixture_entry("fake-custom-op-broadcast")
    edit_page(folder, r"pattern: 'Broad cast error, dim1 = \d+, dim2 = \d+'", "pattern: 'Broadcast error'")
    with pytest.raises(KBError, match="does not match its example"):
        load_entry(folder)


def test_check_naming_an_unknown_signature(fixture_entry):
    folder = fixture_entry(GUARD)
    test = folder / "test_checks.py"
    test.write_text(test.read_text().replace('["drift"]', '["drfit"]', 1))
    with pytest.raises(KBError, match=r"test_checks.py: check 'silu' names unknown signature 'drfit'"):
        load_checks(load_entry(folder))


def test_missing_reproducer(fixture_entry):
    folder = fixture_entry(GUARD)
    (folder / "repro.py").unlink()
    with pytest.raises(KBError, match="repro.py: missing"):
        load_entry(folder)


def kb(*args):
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, text=True, env=os.environ)


def test_cli_reports_a_broken_entry_in_one_line(fixture_corpus):
    edit_page(fixture_corpus / "repros" / GUARD, "symptom: wrong-output", "symptom: sad")
    p = kb("list")
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "README.md: field 'symptom'" in p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert "fake-pow-nan" in p.stdout and GUARD not in p.stdout  # the others are still listed


def test_a_broken_entry_fails_its_own_tests_not_the_others_contracts(fixture_corpus):
    edit_page(fixture_corpus / "repros" / GUARD, "symptom: wrong-output", "symptom: sad")
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-k", "explain or page or entry",
                        str(fixture_corpus / "repros")], capture_output=True, text=True, cwd=fixture_corpus,
                       env=os.environ)
    assert p.returncode != 0
    assert "fake-pow-nan/test_checks.py::contract[explain] PASSED" in p.stdout or " passed" in p.stdout
    failed = [ln for ln in p.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    assert failed and all(GUARD in ln for ln in failed), p.stdout[-3000:]


def test_kb_new_scaffolds_an_entry_whose_placeholders_fail_until_filled_in(fixture_corpus):
    import re

    from kb import engines
    from kb.harness import run_check

    slug = "fake-einsum-three-operands"
    p = kb("new", slug, "--engine", "mnn")
    assert p.returncode == 0, p.stderr
    folder = fixture_corpus / "repros" / slug
    assert sorted(f.name for f in folder.iterdir()) == ["README.md", "repro.py"]  # checks are rows of the page
    listed = kb("list")  # a placeholder is a broken entry: one line naming the file and what is left
    assert listed.returncode != 0 and "Traceback" not in listed.stderr
    assert f"repros/{slug}/README.md: still to fill in" in listed.stderr
    assert "title" in listed.stderr and "trigger.0.nodes.first.op" in listed.stderr and "zh.title" in listed.stderr
    # filled in, it loads: a one-check entry in the lines a user writes
    page = folder / "README.md"
    text = re.sub(r'"TODO[^"]*"', '"written"', page.read_text())
    text = text.replace("{op: TODO}", "{op: Einsum}").replace("'TODO: a regex for the engine''s own line'",
                                                              "'Einsum failed'")
    text = text.replace("TODO: ", "")
    page.write_text(text)
    entry = load_entry(folder)
    assert (entry.meta.id, entry.meta.engines) == ("KB904", ["mnn"])
    checks = load_checks(entry)
    check, *ways = checks.items.values()  # the trigger case's check, then a variant for each way it is exported
    assert check.engine == "mnn" and len(ways) == 8 and all(c.variant.startswith("trigger-") for c in ways)
    rec = run_check(entry, check)
    if engines.missing("mnn"):
        assert rec.verdict == "skipped"
        return
    assert rec.verdict == "error"
    assert f"NotImplementedError: repros/{slug}/repro.py: write the model" in rec.detail


@pytest.mark.parametrize("slug, engine, id, problem", [
    (GUARD, "mnn", None, "already exists"),
    ("Not_A_Slug", "mnn", None, "not a valid slug"),
    ("fake-new-entry", "tensorrt", None, "unknown engine 'tensorrt'"),
    ("fake-new-entry", "mnn", "135", "is not an entry id"),
    ("fake-new-entry", "mnn", "TAKEN", "is already the id of another entry"),
])
def test_kb_new_refuses_bad_input(fixture_corpus, slug, engine, id, problem):
    from kb.scaffold import new_entry, used_ids

    if id == "TAKEN":
        id = f"KB{used_ids(fixture_corpus)[0]:03d}"
    before = sorted(p.relative_to(fixture_corpus) for p in fixture_corpus.rglob("*"))
    with pytest.raises(KBError, match=problem):
        new_entry(slug, engine, id=id)
    assert sorted(p.relative_to(fixture_corpus) for p in fixture_corpus.rglob("*")) == before  # nothing written


def test_kb_new_takes_the_id_handed_out(fixture_corpus):
    from kb.scaffold import new_entry, next_id

    assert next_id(fixture_corpus) != "KB777"
    page = new_entry("fake-handed-out", "mnn", id="KB777") / "README.md"
    assert re.search(r"^id: KB777\b", page.read_text(), re.M)


@pytest.mark.parametrize("body, result", [
    ('    yield Case("a", M())\n    yield harness.Case("b", M())\n', ["a", "b"]),
    ('    for n in NAMES:\n        yield Case(n, M())\n', "a variant's name is computed"),
    ('    return [make(n) for n in NAMES]\n', "variants() shows no Case"),  # never zero checks in silence
])
def test_variant_names_are_read_from_the_source_or_refused(tmp_path, body, result):
    from kb.checks import variant_names

    repro = tmp_path / "repro.py"
    repro.write_text(f"def variants():\n{body}")
    if isinstance(result, list):
        assert variant_names(repro) == result
    else:
        with pytest.raises(KBError, match=re.escape(result)):
            variant_names(repro)


def test_the_ways_a_case_is_exported_are_variants_named_alike_in_the_source_and_the_export(tmp_path):
    from kb.checks import variant_names
    from kb.export import Case, _with_ways

    repro = tmp_path / "repro.py"
    repro.write_text('def cases():\n    yield Case("t", M(), (x,), dynamo=False, ways=["opset11", "opset13", "dynamo"])\n'
                     'def variants():\n    yield Case("near", M())\n')
    assert variant_names(repro) == ["t-opset11", "t-dynamo", "near"]  # opset 13 is the case's own way
    made = _with_ways(Case("t", None, (), dynamo=False, ways=["opset11", "opset13", "dynamo"]))
    assert [(c.name, c.opset, c.dynamo, c.variant) for c in made] == [
        ("t", 13, False, False), ("t-opset11", 11, False, True), ("t-dynamo", 18, True, True)]
    repro.write_text('def cases():\n    yield Case("t", M(), (x,), dynamo=DYN, ways=True)\n')
    with pytest.raises(KBError, match="written as literals"):
        variant_names(repro)
    repro.write_text('def cases():\n    yield Case("t", M(), (x,), dynamo=False, ways=["opset99"])\n')
    with pytest.raises(KBError, match="unknown ways"):
        variant_names(repro)
    repro.write_text('def cases():\n    yield Case("t", M(), (x,))\ndef variants():\n    yield Case("v", M(), (x,), ways=True)\n')
    with pytest.raises(KBError, match="line 4: ways= is read in cases"):  # a variant's ways would be dropped unsaid
        variant_names(repro)
    from kb.export import _one_way

    with pytest.raises(ValueError, match="ways= is read in cases"):
        _one_way(Case("v", None, (), dynamo=False, ways=True))


SMALLEST_PAGE = """---
id: KB901
title: "MNN: Round rounds halves away from zero"
added: 2026-11-29
engines: [mnn]
components: [runtime]
symptom: wrong-output
trigger: [{name: round, summary: any Round, nodes: {r: {op: Round}}}]
signatures: [{id: wrong-values, kind: mismatch, summary: "Round(0.5) gives 1, not 0"}]
checks:
  - {name: round-half, bug: [wrong-values], run: mnn, case: round}
  - {variants: [wrong-values], run: mnn}
---
"""
SMALLEST_REPRO = """import torch
from kb.export import Case


class Round(torch.nn.Module):
    def forward(self, x):
        return torch.round(x * 2)


def cases():
    yield Case("round", Round(), (torch.tensor([0.25, 0.75, 1.25, -0.25]),), dynamo=False, ways=True)
"""


def test_the_smallest_entry_is_25_lines_and_passes_every_contract(corpus):
    from kb import engines

    if engines.missing("mnn"):
        pytest.skip("MNN is not installed")
    folder = corpus / "repros" / "mnn-round-smallest"
    folder.mkdir()
    (folder / "README.md").write_text(SMALLEST_PAGE)
    (folder / "repro.py").write_text(SMALLEST_REPRO)
    assert (SMALLEST_PAGE + SMALLEST_REPRO).count("\n") <= 25
    assert kb("check", "mnn-round-smallest").returncode == 1  # new: nothing accepted yet
    assert kb("accept", "mnn-round-smallest").returncode == 0
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", str(folder)],
                       capture_output=True, text=True, cwd=corpus, env=os.environ)
    assert p.returncode == 0, p.stdout[-3000:]
    assert re.search(r"PASSED \S+::contract\[scope\]", p.stdout), p.stdout[-3000:]
    assert p.stdout.count("XFAIL") == 9  # the bug check and the 8 ways it is exported, all reproducing as accepted


def test_a_parsed_page_is_kept_until_its_text_changes(fixture_entry, corpus, monkeypatch):
    monkeypatch.setenv("KB_CACHE", str(corpus / ".kb" / "cache"))
    folder = fixture_entry(GUARD)
    first = load_entry(folder)
    assert len(list((corpus / ".kb" / "cache" / "entries").glob("*.pickle"))) == 1
    again = load_entry(folder)  # from the cache
    assert again.meta == first.meta and again.body == first.body
    edit_page(folder, "symptom: wrong-output", "symptom: sad")  # a kept parse must never hide a broken page
    with pytest.raises(KBError, match="field 'symptom'"):
        load_entry(folder)
