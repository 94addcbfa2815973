"""Reading the knowledge never runs an entry's Python (issue 30): `kb list`, the site's pages, `kb scan`,
`kb explain` and `kb accept` read test_checks.py as source (kb.checks.declared_checks); only running a
check imports it. The same declarations either way: every field of every check of the real corpus."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from kb.checks import declared_checks, load_checks
from kb.entries import load_all

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def no_entry_python(monkeypatch):
    """Fail on any attempt to load a module from an entry's folder."""
    real = importlib.util.spec_from_file_location

    def guarded(name, location=None, *args, **kwargs):
        if location is not None and "repros" in Path(location).parts:
            raise AssertionError(f"imported an entry's Python: {location}")
        return real(name, location, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "spec_from_file_location", guarded)


def test_the_site_scan_explain_and_list_import_no_entry(fixture_corpus, no_entry_python, tmp_path, capsys):
    import onnx
    from onnx import TensorProto, helper

    from kb.cli import list_
    from kb.match.report import explain_command
    from kb.match.scan import scan_command
    from kb.site.generate import render

    list_()
    site = render(fixture_corpus, records=tmp_path / "none", entries=load_all(fixture_corpus))
    assert "fake-pow-nan.md" in site.pages
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    graph = helper.make_graph([helper.make_node("Sub", ["x", "x"], ["d"]), helper.make_node("Pow", ["d", "two"], ["y"])],
                              "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [two])
    model = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph), model)
    scan_command(str(model), [], False)
    log = tmp_path / "l.log"
    log.write_text("These Op Not Support: ONNX::FakeWidget\n", encoding="utf-8")
    explain_command(str(log), False, markdown=True)
    capsys.readouterr()


def test_the_guard_itself_catches_an_import(fixture_corpus, no_entry_python):
    entry = load_all(fixture_corpus)[0]
    with pytest.raises(AssertionError, match="imported an entry's Python"):
        load_checks(entry)


def test_reading_the_source_gives_what_importing_gives_for_every_real_entry():
    differ = []
    for e in load_all(REPO):
        ran, read = load_checks(e).items, declared_checks(e).items
        if list(ran) != list(read):
            differ.append(f"{e.slug}: names {sorted(set(ran) ^ set(read))}")
            continue
        for name, c in ran.items():
            fields = [f for f in c.__dataclass_fields__ if f != "fn" and getattr(c, f) != getattr(read[name], f)]
            if fields:
                differ.append(f"{e.slug} {name}: {fields}")
    assert not differ, differ


def test_a_computed_argument_is_one_clear_line(fixture_corpus):
    from kb.errors import KBError

    entry = next(e for e in load_all(fixture_corpus) if e.slug == "fake-pow-nan")
    text = entry.test.read_text(encoding="utf-8")
    entry.test.write_text(text.replace("@checks.bug(", "@checks.bug(*pick(), ", 1), encoding="utf-8")
    with pytest.raises(KBError, match="takes literals or module-level constants"):
        declared_checks(entry)


def test_the_readme_lists_every_rule_the_contracts_enforce():
    import re

    from kb import contracts

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"<!-- contracts:[^\n]*-->\n(.*?)\n<!-- /contracts -->", readme, re.S)
    assert listed and listed[1] == contracts.rules(), "regenerate the README's contracts list from contracts.rules()"
    assert str(contracts.MIN_VARIANTS) in contracts.scope.__doc__  # the number the docstring states is the code's
