"""Checks as rows of the front matter (kb.pipelines): read without running, each bound to its own case and
options, run like any check, and an entry with only rows needs no test_checks.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kb.checks import declared_checks, load_checks
from kb.entries import load_all
from kb.errors import KBError

NAN = "fake-pow-nan"


def to_rows(folder, rows: str) -> None:
    """Replace the entry's test_checks.py by rows in its front matter."""
    (folder / "test_checks.py").unlink()
    page = folder / "README.md"
    head, sep, body = page.read_text(encoding="utf-8")[4:].partition("\n---\n")
    page.write_text("---\n" + head + "\nchecks:\n" + rows + "---\n" + body, encoding="utf-8")


def entry(corpus, slug):
    return next(e for e in load_all(corpus) if e.slug == slug)


def test_an_entry_of_rows_only_runs_and_keeps_its_accepted_verdict(fixture_entry, corpus):
    folder = fixture_entry(NAN)
    to_rows(folder, "  - {name: sqrt, bug: [all-nan], run: onnxruntime, case: sqrt}\n")
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-q", "--kb-no-contracts",
                        str(folder)],
                       capture_output=True, text=True, cwd=corpus, env={**os.environ, "KB_ROOT": str(corpus)})
    assert "XFAIL" in p.stdout and "README.md::test_check[sqrt]" in p.stdout, p.stdout[-3000:]
    assert "reproduces [all-nan] on onnxruntime" in p.stdout and " failed" not in p.stdout, p.stdout[-3000:]


def test_each_row_runs_its_own_case_and_options(fixture_entry, corpus):
    folder = fixture_entry(NAN)
    to_rows(folder, "  - {name: sqrt, bug: [all-nan], run: onnxruntime, case: sqrt}\n"
                    "  - {name: abs, control: true, run: onnxruntime, case: sqrt-abs}\n"
                    "  - {name: two, bug: [all-nan], run: pnnx, case: sqrt, source: onnx, inputs: [in0, in1]}\n")
    e = entry(corpus, NAN)
    for checks in (declared_checks(e), load_checks(e)):
        fns = {n: (c.fn.keywords, c.engines) for n, c in checks.items.items()}
        assert fns == {"sqrt": ({"case": "sqrt"}, ("onnxruntime",)),
                       "abs": ({"case": "sqrt-abs"}, ("onnxruntime",)),
                       "two": ({"case": "sqrt", "source": "onnx", "inputs": ["in0", "in1"]}, ("pnnx", "ncnn"))}


@pytest.mark.parametrize("row, says", [
    ("{name: x, bug: [all-nan], run: tflite, case: sqrt}", "unknown pipeline 'tflite'"),
    ("{name: x, bug: [all-nan], run: mnn, case: sqrt, source: onnx}", "pipeline 'mnn' takes no option source"),
    ("{name: x, bug: [all-nan], control: true, run: mnn, case: sqrt}", "exactly one of bug, variants, control"),
    ("{name: x, bug: [nope], run: mnn, case: sqrt}", "names unknown signature 'nope'"),
])
def test_a_wrong_row_is_one_line_naming_the_file(fixture_entry, corpus, row, says):
    folder = fixture_entry(NAN)
    to_rows(folder, f"  - {row}\n")
    with pytest.raises(KBError, match=says) as e:
        declared_checks(entry(corpus, NAN)) if (folder / "README.md").is_file() else None
    assert "README.md" in str(e.value) or "test_checks.py" in str(e.value)
