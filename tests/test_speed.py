"""`kb explain` fast and bounded (issue 29): a log never imports an engine, the caches go stale when an entry
changes, and a large log is read in bounded memory with the same results. Timings are printed by
bench/explain_speed.py; nothing here is timed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kb.entries import load_all
from kb.match import explain as ex
from kb.match import logfile, rules

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "real_logs"
ENGINES = ("torch", "onnx", "onnxruntime", "ncnn", "MNN")

# Runs the CLI in this process, then prints which of the heavy modules it loaded.
WRAPPER = """
import json, sys
from kb.cli import main
sys.argv = ["kb", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
heavy = %r
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(heavy))), file=sys.stderr)
"""


@pytest.mark.parametrize("flags", [[], ["--json"], ["--format", "markdown"]])
def test_explain_on_a_log_imports_no_engine_and_no_segmenter(tmp_path, flags):
    log = tmp_path / "one.log"
    log.write_text("onnx2ncnn: layer ArgMax not exists or registered\n")  # an ncnn layer name: no ncnn import
    heavy = ENGINES + ("jieba", "numpy")
    p = subprocess.run([sys.executable, "-c", WRAPPER % (heavy,), "explain", str(log), *flags], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    loaded = json.loads(p.stderr.strip().splitlines()[-1])
    assert loaded == [], f"kb explain {' '.join(flags)} on a one-line log imported {loaded}"


def test_the_ncnn_layer_list_is_the_installed_ncnns():
    ncnn = pytest.importorskip("ncnn")
    missing = [n for n in rules.NCNN_LAYER_NAMES if ncnn.layer_to_index(n) < 0]
    assert not missing, f"NCNN_LAYER_NAMES names layers the installed ncnn does not register: {missing}"


def _entry_copy(root: Path) -> Path:
    """The real corpus's entries with their message pages, in a temporary root."""
    import shutil

    shutil.copytree(ROOT / "repros", root / "repros", ignore=shutil.ignore_patterns("__pycache__", "*.onnx"))
    return root


def test_editing_an_entry_invalidates_the_caches(tmp_path, monkeypatch):
    from kb import messages
    from kb.match.words import Index

    root = _entry_copy(tmp_path)
    monkeypatch.setenv("KB_ROOT", str(root))
    monkeypatch.setenv("KB_CACHE", str(tmp_path / "cache"))
    entries = load_all()
    msgs = list(messages.load_all(entries=entries).values())
    Index.load(entries, msgs)  # built, and written to the cache
    assert any((tmp_path / "cache" / "words").iterdir())
    page = next(e for e in entries if e.meta.synonyms).page
    text = page.read_text()
    page.write_text(re.sub(r"(?m)^title: .*$", "title: zzquux a title nobody else has", text, count=1))
    entries = load_all()
    assert any(e.meta.title.startswith("zzquux ") for e in entries), "the entry cache kept the old page"
    index = Index.load(entries, msgs)
    assert "zzquux" in index.weights, "the words index kept the old page"
    assert index.rank("zzquux")[0][0].page == page


def test_editing_a_message_page_is_read_in_the_same_process(tmp_path):
    """Message pages are kept parsed by their text (kb explain reads them all on each call): an edit is read."""
    import yaml

    from kb import messages

    src = next(messages.folder(ROOT).glob("*.yaml"))
    page = tmp_path / src.name
    data = yaml.safe_load(src.read_text(encoding="utf-8"))
    page.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    assert messages.load(page).summary == data["summary"]
    page.write_text(yaml.safe_dump({**data, "summary": "zzquux, a summary nobody else has"}, allow_unicode=True),
                    encoding="utf-8")
    assert messages.load(page).summary == "zzquux, a summary nobody else has"


def _results(log: Path, entries):
    """What a log's lines name: per entry, its hits and evidence (line, number), and the messages shown."""
    seen: list = []
    with log.open("rb") as f:
        ranked, _ = ex.explain(str(log), f, entries, seen=seen)
    per = {x.entry.slug: ([(h.rule.sig.id, h.number, h.line) for h in x.hits],
                          [(v.sig.id, v.number, v.line) for v in x.evidence]) for x in ranked if x.hits or x.evidence}
    return per, sorted(m.id for m in seen)


def test_reading_only_the_lines_that_may_matter_changes_no_result_on_real_logs(monkeypatch):
    entries = load_all(ROOT)
    logs = sorted(p for p in REAL.iterdir() if p.suffix in (".log", ".txt"))
    whole = {p.name: _results(p, entries) for p in logs}
    monkeypatch.setattr(logfile, "KEEP_ALL", 0)  # every log read as a large one is
    bounded = {p.name: _results(p, entries) for p in logs}
    assert bounded == whole


def test_a_large_log_is_kept_bounded_with_its_line_numbers(tmp_path, monkeypatch):
    monkeypatch.setattr(logfile, "KEEP_ALL", 2**16)
    monkeypatch.setattr(logfile, "KEEP_MAX", 2**18)
    filler = "[12:00:01] INFO convert op Conv /backbone/stage1/conv%d -> conv_%d shape = [1, 64, 80, 80]\n"
    n = 40_000  # about 3.6 MB
    log = tmp_path / "big.log"
    with log.open("w") as f:
        for i in range(n):
            f.write(filler % (i, i))
            if i == n // 2:
                f.write("Unknown data type 0\nGather not supported yet\n")
    read: list[str] = []
    with log.open("rb") as f:
        ranked, _ = ex.explain(str(log), f, load_all(ROOT), read=read)
    assert len(read) == n + 2  # one per line: line numbers stay as read
    assert sum(len(x) + 1 for x in read) <= logfile.KEEP_MAX
    assert read[n // 2 + 1:n // 2 + 3] == ["Unknown data type 0", "Gather not supported yet"]
    best = ranked[0]
    assert best.confidence == ex.MATCH and best.evidence
    assert {v.number for v in best.evidence} <= {n // 2 + 2, n // 2 + 3}


@pytest.mark.parametrize("pattern,texts", [
    (r"Use While to compute LSTM.*\s*\n\s*(Segmentation fault|.*SIGSEGV)", {"use while to compute lstm": 2}),
    (r"Converte? (?:Onnx|Tensorflow)'s Op \S+ ,", {"convert onnx's op ", "converte onnx's op ",
                                                  "convert tensorflow's op ", "converte tensorflow's op "}),
    (r"(?s)ConvTranspose.*split group convolution ERROR", {"convtranspose", "split group convolution error"}),
    (r"\A(?![\s\S]*Shape not supported yet)(?=[\s\S]*?((?:Where|Cast) not supported yet))",
     {"shape not supported yet", "where not supported yet", "cast not supported yet"}),
    (r"\d+", None),
])
def test_line_literals(pattern, texts):
    found = logfile.line_literals(pattern)
    if texts is None:
        assert found is None
    elif isinstance(texts, dict):
        assert found == texts
    else:
        assert set(found) == texts


def test_progress_is_shown_on_a_terminal_only(tmp_path):
    import os
    import pty

    log = tmp_path / "big.log"
    log.write_text("[12:00:01] INFO convert op Conv /backbone/conv -> conv_1\n" * 40_000)  # > PROGRESS_FROM
    code = ("import sys; from kb.match import report\n"
            "with open(sys.argv[1], 'rb') as f, report.progress(f) as r:\n"
            "    print(type(r).__name__, file=sys.stdout)\n"
            "    while r.read(1 << 16): pass\n")
    piped = subprocess.run([sys.executable, "-c", code, str(log)], cwd=ROOT, capture_output=True, text=True)
    assert piped.stdout.strip() == "BufferedReader" and piped.stderr == ""
    main, child = pty.openpty()
    p = subprocess.run([sys.executable, "-c", code, str(log)], cwd=ROOT, stdout=subprocess.PIPE, stderr=child,
                       text=True, timeout=120)
    os.close(child)
    assert p.stdout.strip() == "Counted"
    shown = os.read(main, 1 << 16).decode(errors="replace")
    os.close(main)
    assert re.search(r"reading the log", shown)


def test_an_alternation_skips_a_block_holding_none_of_its_branches():
    assert rules._rule_literals("load_module_from_file failed|Invalid model file") == \
        ("load_module_from_file failed", "invalid model file")
    assert rules._rule_literals("(?:reshape to|permute) [5-9]-rank|reshape: target") == ("-rank", "reshape: target")
    assert rules._rule_literals(r"\d+ failed|\w+") == ()  # a branch with no text: no prefilter


def test_a_crash_pattern_names_an_upper_case_signal_and_no_sigmoid():
    from kb.entries import load_all

    crash = [r for r in rules.rules(load_all(ROOT)) if r.sig.kind == "crash" and r.rx.pattern == r.sig.pattern]
    assert crash and all(not r.rx.search("/Sigmoid_output_0 -> sigmoid_3") for r in crash)
    assert any(r.rx.search("killed by SIGSEGV") for r in crash)
