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
                    "  - {name: two, bug: [all-nan], run: pnnx, case: sqrt, source: onnx, inputs: [in0, in1]}\n"
                    "  - {name: opt, bug: [all-nan], run: pnnx, case: sqrt, flags: [optlevel=0]}\n")
    e = entry(corpus, NAN)
    for checks in (declared_checks(e), load_checks(e)):
        fns = {n: (c.fn.keywords, c.engines) for n, c in checks.items.items()}
        assert fns == {"sqrt": ({"case": "sqrt"}, ("onnxruntime",)),
                       "abs": ({"case": "sqrt-abs"}, ("onnxruntime",)),
                       "two": ({"case": "sqrt", "source": "onnx", "inputs": ["in0", "in1"]}, ("pnnx", "ncnn")),
                       "opt": ({"case": "sqrt", "flags": ["optlevel=0"]}, ("pnnx", "ncnn"))}


@pytest.mark.parametrize("row, says", [
    ("{name: x, bug: [all-nan], run: tflite, case: sqrt}", "unknown pipeline 'tflite'"),
    ("{name: x, bug: [all-nan], run: mnn, case: sqrt, source: onnx}", "pipeline 'mnn' takes no option source"),
    ("{name: x, bug: [all-nan], control: true, run: mnn, case: sqrt}", "exactly one of bug, variants, control"),
    ("{name: x, bug: [nope], run: mnn, case: sqrt}", "names unknown signature 'nope'"),
    ("{name: x, bug: [all-nan], run: mnn-script, case: sqrt}", "pipeline 'mnn-script' needs script, mode"),
    ("{name: x, bug: [all-nan], run: pnnx, case: sqrt, flags: [fp16=0]}", "kb does not set itself: fp16=0"),
    ("{name: x, bug: [all-nan], run: mnn-script, case: sqrt, script: nope.py, mode: m}", "no script 'nope.py'"),
])
def test_a_wrong_row_is_one_line_naming_the_file(fixture_entry, corpus, row, says):
    folder = fixture_entry(NAN)
    to_rows(folder, f"  - {row}\n")
    with pytest.raises(KBError, match=says) as e:
        declared_checks(entry(corpus, NAN)) if (folder / "README.md").is_file() else None
    assert "README.md" in str(e.value) or "test_checks.py" in str(e.value)


def test_a_variants_row_runs_the_variants_its_match_and_skip_select(fixture_entry, corpus):
    folder = fixture_entry(NAN)
    with open(folder / "repro.py", "a", encoding="utf-8") as f:
        f.write('\n\ndef variants():\n    x = torch.ones(1, 4)\n'
                '    yield Case("a", Net(False), (x,), ["x"], ["y"])\n'
                '    yield Case("b-onnx2ncnn", Net(False), (x,), ["x"], ["y"])\n'
                '    yield Case("c", Net(False), (x,), ["x"], ["y"])\n')
    to_rows(folder, "  - {name: sqrt, bug: [all-nan], run: onnxruntime, case: sqrt}\n"
                    "  - {variants: [all-nan], run: pnnx, skip: '-onnx2ncnn$'}\n"
                    "  - {variants: [all-nan], run: onnx2ncnn, match: '-onnx2ncnn$'}\n")
    got = {n: c.run for n, c in declared_checks(entry(corpus, NAN)).items.items() if c.variant}
    assert got == {"variant-a": "pnnx", "variant-c": "pnnx", "variant-b-onnx2ncnn": "onnx2ncnn"}


def test_variant_names_follow_a_yield_from_the_shared_blocks(tmp_path):
    from kb.checks import variant_names

    repro = tmp_path / "repro.py"
    repro.write_text("from kb.blocks import fp16_variants\n\n\ndef variants():\n    yield from fp16_variants()\n")
    names = variant_names(repro)
    assert len(names) == 20 and names[0] == "l2-norm" and "l2-norm-small-onnx2ncnn" in names


@pytest.mark.parametrize("row, says", [
    ("{name: x, bug: [all-nan], run: mnn, case: sqrt, match: a}", "only a variants row takes them"),
    ("{variants: [all-nan], run: mnn, skip: '('}", "not a regular expression"),
])
def test_match_and_skip_are_checked(fixture_entry, corpus, row, says):
    folder = fixture_entry(NAN)
    to_rows(folder, f"  - {row}\n")
    with pytest.raises(KBError, match=says):
        declared_checks(entry(corpus, NAN))


class _Stub:
    """A session whose engines record what a pipeline asks of them."""

    def __init__(self, meta):
        from types import SimpleNamespace as NS

        self.calls = []
        self.artifacts = NS(case=lambda c: meta, onnx=lambda c: f"{c}.onnx", torchscript=lambda c: f"{c}.pt")
        self.pnnx = NS(convert=lambda model, case, fp16=None, flags=(): self.calls.append(("pnnx", model)) or ("p", "b"))
        self.onnx2ncnn = NS(convert=lambda model: self.calls.append(("onnx2ncnn", model)) or ("p", "b"))
        self.ncnn = NS(run=lambda param, bin, case, inputs, outputs, **kw: self.calls.append(("ncnn", inputs, outputs)))


@pytest.mark.parametrize("pipeline, meta, want", [
    ("pnnx", {"inputs": {"x": [1]}, "outputs": ["y"], "torchscript": "c.pt"}, [("pnnx", "c.pt"), ("ncnn", ["in0"], ["out0"])]),
    ("pnnx", {"inputs": {"x": [1], "m": [1]}, "outputs": ["y"]}, [("pnnx", "c.onnx"), ("ncnn", ["in0", "in1"], ["out0"])]),
    ("onnx2ncnn", {"inputs": {"x": [1], "m": [1]}, "outputs": ["y", "z"]}, [("onnx2ncnn", "c.onnx"),
                                                                            ("ncnn", ["x", "m"], ["y", "z"])]),
])
def test_a_pipeline_defaults_to_what_the_case_exported(pipeline, meta, want):
    """pnnx reads the TorchScript where the case was traced, else its ONNX, and names blobs in0.., out0..;
    onnx2ncnn's blobs are the ONNX graph's own input and output names."""
    from kb.pipelines import PIPELINES

    s = _Stub(meta)
    PIPELINES[pipeline].call(s, case="c")
    assert s.calls == want
