"""The answer is the ledger's (issue 29): the first screen and `kb explain`'s reply name the workaround the
ledger verifies for the user's engine and release, with its scope and limits; `--engine` narrows, never
removes it; an unmeasured release gets the nearest measured ones; words alone make no diagnosis.

Real entries are copied into a temporary corpus with no records, so only their committed ledgers speak."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kb import contracts
from kb.checks import load_checks
from kb.entries import load_all
from kb.match import codes
from kb.match.report import explain_command
from kb.site.generate import render

REPOS = Path(__file__).resolve().parents[1] / "repros"
LAYERNORM = "ncnn-onnx2ncnn-layernorm"  # KB004
FOCUS = "ncnn-strided-slice-focus"  # KB017
ISNAN = "mnn-isnan-unsupported"  # KB012
KL = "mnn-quant-ema-accuracy"  # KB041


@pytest.fixture
def real(corpus):
    """Copy real entries (and the message index) into the temporary corpus."""
    shutil.copytree(REPOS / "_messages", corpus / "repros" / "_messages")

    def copy(*slugs: str) -> Path:
        for slug in slugs:
            shutil.copytree(REPOS / slug, corpus / "repros" / slug, ignore=shutil.ignore_patterns("__pycache__"))
        contracts._corpus.cache_clear()
        contracts._page_context.cache_clear()
        contracts._pages.cache_clear()
        return corpus

    return copy


def reply(corpus: Path, log: str, *engines: str, capsys) -> str:
    path = corpus / "issue.log"
    path.write_text(log + "\n", encoding="utf-8")
    explain_command(str(path), False, markdown=True, engines=list(engines))
    return capsys.readouterr().out


def entry(corpus: Path, slug: str):
    return next(e for e in load_all(corpus) if e.slug == slug)


def first_screen(corpus: Path, slug: str) -> str:
    page = contracts._pages(corpus, slug)[0]
    return re.sub(r"<[^>]+>", "", re.search(r'<p class="kb-answer-fix">(.*?)</p>', page, re.S)[1])


def test_kb004_an_out_of_scope_check_is_a_limit_not_a_breakage(real, capsys):
    root = real(LAYERNORM)
    screen = first_screen(root, LAYERNORM)
    assert screen.startswith("Verified workaround (pnnx 20261020): Convert with pnnx"), screen
    assert "Limit: not from ONNX exported at opset 18" in screen
    text = reply(root, "layer LayerNormalization not exists or registered", "ncnn==1.0.20261020", capsys=capsys)
    assert "**Status:** ncnn 1.0.20261020: affected" in text
    assert "- Verified workaround (pnnx 20261020): Convert with pnnx" in text
    assert "Limit: not from ONNX exported at opset 18" in text
    assert "pnnx model.pt inputshape=" in text  # the command, not only the prose
    assert "workaround broken" not in text


@pytest.mark.parametrize("engines", [(), ("ncnn==1.0.20261020",)])
def test_kb017_the_workaround_survives_engine(real, capsys, engines):
    root = real(FOCUS)
    text = reply(root, "Unsupported slice step !", *engines, capsys=capsys)
    assert "**Diagnosis:** this is KB017" in text
    assert "- Verified workaround (onnx2ncnn a4d2ea1): Replace the strided slicing with F.pixel_unshuffle" in text


def test_an_unmeasured_release_gets_the_nearest_measured_ones_and_what_to_do(real, capsys):
    root = real(ISNAN)
    text = reply(root, "These Op Not Support: ONNX::IsNaN", "mnn==2.5.0", capsys=capsys)
    assert "MNN 2.5.0: not measured on this release; the nearest measured: 3.0.0 (newer): affected" in text
    assert "**What to do:**" in text
    text = reply(root, "These Op Not Support: ONNX::IsNaN", "mnn==3.3.0", capsys=capsys)
    assert "the nearest measured: 3.2.0 (older): affected, 3.4.0 (newer): affected" in text
    assert "- Verified workaround (MNN 3.2.0, the nearest measured release to your 3.3.0)" in text


def test_words_alone_make_candidates_not_a_diagnosis(real, capsys):
    root = real(ISNAN, KL, "mnn-arm-fp16-precision-low")
    text = reply(root, "MNN转换后的模型输出全是nan", capsys=capsys)
    assert "Diagnosis" not in text
    assert text.startswith("**Not a diagnosis yet:**")
    assert "Picked because the report's words" in text and "It is this one if" in text
    assert "post the whole converter log" in text


def test_a_model_dependent_workaround_gives_its_spread(real):
    root = real(KL)
    screen = first_screen(root, KL)
    assert screen.startswith("Verified workaround (MNN 3.6.1)"), screen
    assert "works on 3 of 4 models measured (not on kl-residual)" in screen


def _flip(root: Path, slug: str, check: str, release: str, verdict: str) -> None:
    """Rewrite one cell of the ledger: the run holding `release` loses it to a run of its own."""
    import yaml

    path = root / "repros" / slug / "expected.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for runs in data["checks"][check].values():
        for run in runs:
            if release in run["versions"]:
                run["versions"].remove(release)
                runs.append({"versions": [release], "verdict": verdict, "fingerprint": "outputs differ",
                             "seen": run["seen"]})
                break
        runs[:] = [r for r in runs if r["versions"]]
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def test_mutation_an_in_scope_check_broken_changes_the_summary(real, capsys):
    root = real(LAYERNORM)
    _flip(root, LAYERNORM, "pnnx-torchscript-channel-ln", "20261020", "broken")
    contracts._pages.cache_clear()
    assert first_screen(root, LAYERNORM).startswith("No workaround is verified"), first_screen(root, LAYERNORM)
    text = reply(root, "layer LayerNormalization not exists or registered", "ncnn==1.0.20261020", capsys=capsys)
    assert "Verified workaround" not in text and "No workaround is verified" in text
    e = entry(root, LAYERNORM)
    assert contracts.answer(e, load_checks(e)) is None  # page, reply and ledger still agree


def test_mutation_a_skipped_check_is_no_verdict(real):
    root = real(LAYERNORM)
    for check in ("pnnx-torchscript-channel-ln", "pnnx-onnx-channel-ln", "pnnx-torchscript-permute-ln",
                  "pnnx-onnx-permute-ln"):
        _flip(root, LAYERNORM, check, "20261020", "error")
    contracts._pages.cache_clear()
    assert not first_screen(root, LAYERNORM).startswith("Verified workaround (pnnx 20261020)")


def test_mutation_the_contract_catches_a_derivation_that_ignores_limits(real, monkeypatch):
    root = real(LAYERNORM)
    from kb import status

    real_at = status._verified_at
    monkeypatch.setattr(status, "_verified_at", lambda w, checks, v: real_at(w.model_copy(update={"limits": []}),
                                                                             checks, v))
    e = entry(root, LAYERNORM)
    problem = contracts.answer(e, load_checks(e))
    assert problem and "first screen: the ledger verifies pnnx on pnnx 20261020" in problem


def test_an_engine_that_runs_only_a_control_breaks_no_workaround(real):
    """KB082 (ncnn, a regression guard) runs one pnnx control check, which verifies no workaround; its page
    said "workaround broken" while every ncnn bug check passes and every workaround works there."""
    root = real("ncnn-normalize-4d-depth")
    page = contracts._pages(root, "ncnn-normalize-4d-depth")[0]
    assert re.search(r'class="kb-headline"><span [^>]*data-status="fixed"', page), \
        re.search(r'class="kb-headline">.{0,200}', page)[0]
    assert "its checks now say" not in page
    # a guard fixed on the newest releases only says where it still reproduces
    assert "it still reproduces on 1.0.20221128 to 1.0.20260114." in page


def test_kb_explain_exit_code_is_unchanged_by_the_reply(real, capsys):
    root = real(FOCUS)
    path = root / "issue.log"
    path.write_text("Unsupported slice step !\n", encoding="utf-8")
    assert explain_command(str(path), False, markdown=True) == codes.FOUND


def test_the_home_page_filters_by_the_same_verified_workaround(real):
    root = real(LAYERNORM, "ncnn-onnx2ncnn-transpose-5d")  # KB035: neither of its workarounds works
    home = render(root, records=root / "none", entries=load_all(root)).pages["index.md"]
    rows = dict(re.findall(r'data-slug="([^"]+)"[^>]*data-workaround="(\w+)"', home))
    assert rows == {LAYERNORM: "verified", "ncnn-onnx2ncnn-transpose-5d": "none"}


def test_scan_gives_the_workaround_verified_for_the_release_with_its_limit(real, tmp_path, capsys):
    import json

    import onnx
    from onnx import TensorProto, helper

    from kb.match.scan import scan_command

    root = real(LAYERNORM)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 4, 4])
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1), helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Pow", ["d", "two"], ["y"])]
    graph = helper.make_graph(nodes, "ln", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    path = root / "ln.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    assert scan_command(str(path), ["ncnn==1.0.20261020"], False) == codes.FOUND
    text = capsys.readouterr().out
    assert "verified workaround (pnnx 20261020): Convert with pnnx" in text
    assert "limit: not from ONNX exported at opset 18" in text
    scan_command(str(path), ["ncnn==1.0.20261020"], True)
    (row, *_) = json.loads(capsys.readouterr().out)
    assert row["status"][0]["verified_workaround"]["id"] == "pnnx"


KB125_LOG = """$ onnx2ncnn reflect-conv1d.onnx reflect-conv1d.param reflect-conv1d.bin
ConstantOfShape not supported yet!
Cast not supported yet!
  # value 4
Unsupported slice step !
  # to=7
Unknown data type 0
[killed by SIGSEGV, 0.01s]
"""


def test_the_crash_that_stopped_the_run_outranks_the_lines_it_went_on_after(real, capsys):
    """KB125's own log (onnx2ncnn prints its hash-ordered 'not supported' lines, then dies): the entry whose evidence
    explains the crash comes first, before KB072 and KB017, whose lines the converter survived."""
    root = real("ncnn-onnx2ncnn-reflect-pad-computed", "ncnn-onnx2ncnn-unconverted-ops", FOCUS)
    (root / "issue.log").write_text(KB125_LOG, encoding="utf-8")
    explain_command(str(root / "issue.log"), False)
    text = capsys.readouterr().out
    found = re.findall(r"^\d\. +(KB\d{3})", text, re.M)
    assert found[:1] == ["KB125"] and {"KB072", "KB017"} <= set(found), text


def test_mutation_the_page_contract_fails_a_page_without_its_status_or_home_row(real, monkeypatch):
    """The page contract renders the entry's own page and home-page row (not the whole site): a page that lost its
    status, or a home page that lost the row, fails it."""
    from kb.site import pages

    root = real(LAYERNORM)
    e = entry(root, LAYERNORM)
    assert contracts.page(e, load_checks(e)) is None
    page, home = pages.entry_page, pages.home_page
    monkeypatch.setattr(pages, "entry_page", lambda *a, **k: page(*a, **k).replace("data-status=", "data-x="))
    contracts._pages.cache_clear()
    assert contracts.page(e, load_checks(e)) == "the page lacks its id or its status"
    monkeypatch.setattr(pages, "entry_page", page)
    monkeypatch.setattr(pages, "home_page", lambda rows: home(rows).replace(LAYERNORM, "x"))
    contracts._pages.cache_clear()
    assert contracts.page(e, load_checks(e)) == "the home page does not list it"


def test_the_first_screen_and_the_reply_end_the_workaround_summary_before_its_scope(real, capsys):
    """A summary written without a full stop (most are) still ends its sentence before "Applies ..." on the first
    screen and "It applies ..." in the reply (KB218 read "PixelShuffle 1=1 Applies an ONNX file ...")."""
    root = real("ncnn-onnx2ncnn-space-depth-ops")
    assert "PixelShuffle 1=1. Applies an ONNX file" in first_screen(root, "ncnn-onnx2ncnn-space-depth-ops")
    text = reply(root, "SpaceToDepth not supported yet!", capsys=capsys)
    assert "PixelShuffle 1=1.\n  It applies an ONNX file" in text, text
