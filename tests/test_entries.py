"""A broken entry is reported on one line naming its file and field."""

import subprocess
import sys

import pytest

from kb.entries import load_all, load_entry
from kb.errors import KBError
from kb.harness import load_checks


def test_the_corpus_loads():
    entries = load_all()
    assert len(entries) >= 5
    assert len({e.meta.id for e in entries}) == len(entries)
    for e in entries:
        load_checks(e)  # checks name only declared signatures, workarounds and engines


def edit_page(folder, old, new):
    page = folder / "README.md"
    text = page.read_text()
    assert old in text
    page.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("old, new, problem", [
    ("id: KB002", "id: 2", "field 'id'"),
    ("symptom: wrong-output", "symptom: sad", "field 'symptom'"),
    ("    kind: mismatch", "    kind: smell", "field 'signatures.0.kind'"),
    ("engines: [mnn]", "engines: [mnn", "front matter is not valid YAML"),
    ("      bn: {op: BatchNormalization}\n    edges: [[deconv, bn]]", "      bn: {op: BatchNormalization}\n    edges: [[deconv, nope]]",
     "edge names unknown node"),
])
def test_broken_front_matter(copy_entry, old, new, problem):
    folder = copy_entry("mnn-grouped-convtranspose-bn-fusion")
    edit_page(folder, old, new)
    with pytest.raises(KBError) as e:
        load_entry(folder)
    assert "README.md" in str(e.value) and problem in str(e.value)
    assert "\n" not in str(e.value)


def test_log_signature_must_match_its_example(copy_entry):
    folder = copy_entry("mnn-groupnorm-unregistered-custom-op")
    edit_page(folder, r"pattern: 'Broad cast error, dim1 = \d+, dim2 = \d+'", "pattern: 'Broadcast error'")
    with pytest.raises(KBError, match="does not match its example"):
        load_entry(folder)


def test_check_naming_an_unknown_signature(copy_entry):
    folder = copy_entry("mnn-grouped-convtranspose-bn-fusion")
    test = folder / "test_checks.py"
    test.write_text(test.read_text().replace('["drift"]', '["drfit"]', 1))
    with pytest.raises(KBError, match=r"test_checks.py: check 'grouped-bn' names unknown signature 'drfit'"):
        load_checks(load_entry(folder))


def test_missing_reproducer(copy_entry):
    folder = copy_entry("mnn-grouped-convtranspose-bn-fusion")
    (folder / "repro.py").unlink()
    with pytest.raises(KBError, match="repro.py: missing"):
        load_entry(folder)


def test_cli_reports_a_broken_entry_in_one_line(copy_entry):
    folder = copy_entry("mnn-grouped-convtranspose-bn-fusion")
    edit_page(folder, "symptom: wrong-output", "symptom: sad")
    p = subprocess.run([sys.executable, "-m", "kb", "list"], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "README.md: field 'symptom'" in p.stderr
    assert "Traceback" not in p.stderr + p.stdout
