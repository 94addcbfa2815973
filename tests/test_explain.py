"""`kb explain`: logs lead to the right entries, and say how sure: `match` only on evidence specific to
an entry, `possible` for generic messages; bad logs get one line. Runs on the fixture corpus
(tests/corpus): KB901 and KB903 share the generic message `fake-broadcast-error`."""

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kb import messages
from kb.entries import load_all
from kb.errors import KBError
from kb.match import codes, logfile
from kb.match.report import explain_command
from kb.match.rules import literal_chars

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "corpus"
CUSTOM = "fake-custom-op-broadcast"  # KB901: a custom op (evidence), a generic broadcast message
NAN = "fake-pow-nan"  # KB903: the same generic broadcast message, engine ncnn
GUARD = "fake-silu-guard"  # KB902: only a mismatch signature (a symptom), engine onnxruntime
BROADCAST = "Broad cast error, dim1 = 8, dim2 = 4"
KEYS = {"entry", "confidence", "line", "url", "message", "id", "title", "score", "line_number", "signature",
        "signatures", "evidence", "words"}


@pytest.fixture
def explain(fixture_corpus, tmp_path, capsys):
    """Write the log (text, or bytes as they are), run explain_command on the fixture corpus; return
    (code, rows), or (code, text) for as_json=False. What went to stderr is kept in run.err."""

    def run(log, as_json=True):
        path = tmp_path / "build.log"
        path.write_bytes(log if isinstance(log, bytes) else log.encode())
        code = explain_command(str(path), as_json)
        out = capsys.readouterr()
        run.err = out.err
        return code, json.loads(out.out) if as_json else out.out

    run.root = fixture_corpus
    return run


def entries_of(rows):
    return [r["entry"] for r in rows]


def confidences(rows):
    return {r["entry"]: r["confidence"] for r in rows}


def add_signature(root: Path, slug: str, yaml_text: str) -> None:
    """Append a signature to a fixture entry's front matter, in the temporary corpus."""
    page = root / "repros" / slug / "README.md"
    text = page.read_text(encoding="utf-8")
    head, rest = text.split("\nsignatures:\n", 1)
    page.write_text(f"{head}\nsignatures:\n{yaml_text}{rest}", encoding="utf-8")


# ---- every log signature's example leads to its entry -------------------------------------------

LOG_SIGNATURES = [(e.slug, s) for e in load_all(FIXTURES) for s in e.meta.signatures if s.kind == "log" and s.example]


def decorated(line):
    """The example as a log shows it: a timestamp, a source path, colours, a Windows line end."""
    return (f"\x1b[32m[2026-11-21 15:49:46.123]\x1b[0m C:\\work\\MNN\\tools\\converter\\source\\x.cpp:220: "
            f"\x1b[1;31m{line}\x1b[0m\r\n")


@pytest.mark.parametrize("slug, sig", LOG_SIGNATURES, ids=[f"{s}/{g.id}" for s, g in LOG_SIGNATURES])
def test_each_signature_example_leads_to_its_entry(slug, sig, explain):
    log = "Start to Convert Other Model Format To MNN Model...\r\n" + decorated(sig.example) + "Done\r\n"
    code, rows = explain(log)
    assert code == codes.FOUND
    row = next(r for r in rows if r["entry"] == slug)
    assert set(row) == KEYS
    assert row["line_number"] == 2
    assert sig.example in row["line"] and "\x1b" not in row["line"]
    assert row["url"] == f"http://127.0.0.1:8000/{slug}/"


# ---- confidence: generic messages are `possible`, evidence is a `match` --------------------------

def test_a_generic_message_alone_is_only_possible(explain):
    code, rows = explain(f"14:02:11.801 [main] {BROADCAST} (at /opt/build/src/file.cpp:88)\n")
    assert code == codes.FOUND  # something is reported, though nothing is attributed
    assert confidences(rows) == {CUSTOM: "possible", NAN: "possible"}
    for r in rows:
        assert r["message"] == "http://127.0.0.1:8000/messages/fake-broadcast-error/"
        assert r["signatures"][0]["generic"] is True and r["evidence"] == []


def test_other_numbers_still_find_the_message(explain):
    _, rows = explain("RuntimeError: Broad cast error, dim1 = 384, dim2 = 192\n")
    assert set(entries_of(rows)) == {CUSTOM, NAN} and {r["confidence"] for r in rows} == {"possible"}
    assert rows[0]["line"].startswith("RuntimeError: Broad cast error")


def test_evidence_across_lines_makes_a_match_and_ranks_it_first(explain):
    log = "mnnconvert -f ONNX --modelFile a.onnx --MNNModel a.mnn --allowCustomOp\nConverted Success!\n" + BROADCAST + "\n"
    _, rows = explain(log)
    assert [(r["entry"], r["confidence"]) for r in rows] == [(CUSTOM, "match"), (NAN, "possible")]
    best = rows[0]
    assert best["evidence"] == [{"signature": "broadcast-error", "line_number": 1, "line": best["line"]}]
    assert best["line_number"] == 1 and "--allowCustomOp" in best["line"]


def test_a_custom_op_is_evidence_with_a_shape_failure_downstream(explain):
    _, rows = explain(f"These Op Not Support: ONNX::FakeWidget\nConverted Failed!\n{BROADCAST}\n")
    assert [(r["entry"], r["confidence"]) for r in rows] == [(CUSTOM, "match"), (NAN, "possible")]
    assert rows[0]["message"] == "http://127.0.0.1:8000/messages/fake-op-not-support/"
    assert rows[0]["evidence"][0]["signature"] == "unsupported-op"


def test_a_custom_op_with_nothing_failing_downstream_is_only_possible(explain):
    # issue 19: the entry's mechanism is a custom op AND a shape-consuming op failing after it; an exporter's
    # placeholder op that nothing consumes is not it
    _, rows = explain("These Op Not Support: ONNX::FakeWidget\nConverted Failed!\n")
    assert [(r["entry"], r["confidence"]) for r in rows] == [(CUSTOM, "possible")]
    _, rows = explain(f"{BROADCAST}\nThese Op Not Support: ONNX::FakeWidget\n")  # the failure came first
    assert confidences(rows)[CUSTOM] == "possible"


@pytest.mark.parametrize("op", ["IsNaN", "GridSample", "GroupQueryAttention"],
                         ids=["onnx", "onnx-opset16", "onnxruntime-contrib"])
def test_an_op_onnx_or_onnxruntime_defines_is_no_custom_op(op, explain):
    _, rows = explain(f"These Op Not Support: ONNX::{op}\n")
    assert confidences(rows) == {CUSTOM: "possible"}


def test_a_signature_whose_message_is_not_generic_is_a_match(explain):
    (explain.root / "repros" / "_messages" / "fake-describe.yaml").write_text(yaml.safe_dump({
        "id": "fake-describe", "engines": ["mnn"], "pattern": r"Can't find input fakeDescribe for \S+",
        "example": "Can't find input fakeDescribe for t0", "summary": "only one cause prints it", "generic": False}))
    add_signature(explain.root, NAN, "  - id: describe\n    kind: log\n    pattern: 'fakeDescribe for \\S+'\n"
                                     "    example: \"Can't find input fakeDescribe for t0\"\n    summary: s\n"
                                     "    message: fake-describe\n")
    _, rows = explain(f"{BROADCAST}\nCan't find input fakeDescribe for /x/y\n")
    assert [(r["entry"], r["confidence"]) for r in rows] == [(NAN, "match"), (CUSTOM, "possible")]
    assert rows[0]["signature"] == "describe" and rows[0]["line_number"] == 2


def test_a_cited_message_missing_from_the_index_is_an_error(explain):
    add_signature(explain.root, NAN, "  - id: lost\n    kind: log\n    pattern: 'lost'\n    summary: s\n"
                                     "    message: no-such-message\n")
    with pytest.raises(KBError) as e:
        explain("lost\n")
    assert "fake-pow-nan/README.md" in str(e.value) and "signatures.0.message" in str(e.value)


# ---- symptoms many causes share: no result on their own -------------------------------------------

def test_a_bare_segfault_is_not_pinned_on_an_entry(explain):
    assert explain("python infer.py\nSegmentation fault (core dumped)\n") == (codes.NOTHING_FOUND, [])


def test_a_long_symptom_pattern_alone_is_no_result(explain):
    # KB902's mismatch pattern is long enough to count without its engine named, but it is a symptom:
    # alone, even with the engine named, it does not make a result.
    for log in ("TESTERROR silu value error : absMaxV:1.2 - DiffMax 0.9\n",
                "onnxruntime 1.20\nTESTERROR silu value error : absMaxV:1.2 - DiffMax 0.9\n"):
        assert explain(log) == (codes.NOTHING_FOUND, [])


def test_a_symptom_counts_with_the_engine_and_another_signature(explain):
    add_signature(explain.root, GUARD, "  - id: crash\n    kind: crash\n    step: MNN\n    pattern: 'SIGSEGV'\n"
                                       "    example: 'Segmentation fault (core dumped)'\n    summary: s\n")
    log = "TESTERROR silu value error : absMaxV:1.2 - DiffMax 0.9\nSegmentation fault (core dumped)\n"
    assert explain(log) == (codes.NOTHING_FOUND, [])  # two symptoms, but the engine is not named
    code, rows = explain("onnxruntime 1.20\n" + log)
    assert code == codes.FOUND and [(r["entry"], r["confidence"]) for r in rows] == [(GUARD, "possible")]
    assert all(s["weak"] for s in rows[0]["signatures"])


def test_specificity_counts_fixed_text_only():
    assert literal_chars(r"Reshape error: \d+ -> \d+") == len("Reshape error:  -> ")
    assert literal_chars("SIGSEGV") == 7
    assert literal_chars(r"absMaxV:[\d.]+ - DiffMax [\d.]+") == len("absMaxV: - DiffMax ")


# ---- text output -------------------------------------------------------------------------------------

def test_text_output_quotes_the_users_own_line_once(explain):
    line = "Broad cast error, dim1 = 16, dim2 = 24"  # the catalogue's example has other numbers
    code, out = explain(f"{line}\n", as_json=False)
    assert f'The line "{line}" is a generic message' in out and "dim1 = 8" not in out
    for block in out.split("\n\n"):  # each entry's block quotes a line once
        quoted = [ln.split("]", 1)[0] for ln in block.splitlines() if ln.startswith("   line ")]
        assert len({q.split(" [")[0] for q in quoted}) == len(quoted), block
    assert "names none of them" not in out or "this line alone names none of them" in out


def test_text_output_says_a_generic_message_is_ambiguous(explain):
    code, out = explain(f"{BROADCAST}\n", as_json=False)
    assert code == codes.FOUND
    assert out.split(": ", 1)[1].startswith("2 known problems are possible (generic messages only), best first")
    assert "[possible]" in out and "[match]" not in out
    assert f"line 1 [broadcast-error, a generic message]: {BROADCAST}" in out
    assert ("to confirm it, check that the op listed is not one ONNX defines; "
            "or the model was converted with --allowCustomOp") in out
    assert f'The line "{BROADCAST}" is a generic message: 3 known causes print it (KB901, KB903 here, and 1 upstream)' in out
    assert "example/fake#3: a made-up model exported without dynamic shapes" in out
    assert "what tells them apart: http://127.0.0.1:8000/messages/fake-broadcast-error/" in out
    assert f"page: http://127.0.0.1:8000/{CUSTOM}/" in out


def test_text_output_of_a_match(explain):
    _, out = explain(f"--allowCustomOp\n{BROADCAST}\n", as_json=False)
    assert "build.log: 1 known problem matches this log and 1 more is possible" in out
    assert "1. KB901" in out and out.index("[match]") < out.index("[possible]")
    assert "line 1 [evidence for broadcast-error]: --allowCustomOp" in out


def test_repeated_lines_are_counted_not_repeated(explain):
    _, rows = explain(f"{BROADCAST}\n" * 3)
    sig = rows[0]["signatures"][0]
    assert sig["count"] == 3 and sig["line_number"] == 1


# ---- encodings and line ends -----------------------------------------------------------------------

def test_windows_line_ends_and_utf16(explain):
    text = f"PS C:\\m> mnnconvert ... --allowCustomOp\r\nThese Op Not Support: ONNX::FakeWidget\r\n{BROADCAST}\r\n"
    code, rows = explain(text.encode("utf-16"))  # what PowerShell's `>` writes
    assert code == codes.FOUND and rows[0]["entry"] == CUSTOM and rows[0]["confidence"] == "match"
    assert sorted(s["line_number"] for s in rows[0]["signatures"]) == [2, 3]


def test_progress_bars_with_bare_carriage_returns(explain):
    _, rows = explain(f"calibrating 10%\rcalibrating 50%\rcalibrating 100%\r{BROADCAST}\n")
    assert rows[0]["line"] == BROADCAST and rows[0]["line_number"] == 4


def test_a_very_long_line_is_cut_not_loaded(explain):
    code, rows = explain(BROADCAST + " " + "x" * (3 * logfile.MAX_LINE) + "\nnext line\n")
    assert code == codes.FOUND
    assert len(rows[0]["line"]) <= 310


def test_crlf_split_across_chunks_keeps_line_numbers(monkeypatch):
    monkeypatch.setattr(logfile, "HEAD", 3)
    monkeypatch.setattr(logfile, "CHUNK", 3)
    got = [(first + i, line) for first, block in logfile.blocks("t", io.BytesIO(b"ab\r\ncd\r\n\r\nef"))
           for i, line in enumerate(block)]
    assert got == [(1, "ab"), (2, "cd"), (3, ""), (4, "ef")]


# ---- nothing matches -------------------------------------------------------------------------------

def test_no_match_suggests_the_search(explain, monkeypatch):
    monkeypatch.setenv("KB_SITE_URL", "https://kb.example.org/")
    code, out = explain("[12:00:01] loading /data/model.onnx\nValueError: Unsupported dtype bfloat16 in /a/b.py\n",
                        as_json=False)
    assert code == codes.NOTHING_FOUND
    assert "build.log: no known problem matches" in out
    assert "https://kb.example.org/?q=ValueError%3A%20Unsupported%20dtype%20bfloat16%20in" in out


def test_no_match_json_is_an_empty_array_and_the_hint_goes_to_stderr(explain):
    code, rows = explain("all good\n")
    assert (code, rows) == (codes.NOTHING_FOUND, [])
    assert "?q=all%20good" in explain.err


def test_reads_stdin(fixture_corpus, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"These Op Not Support: ONNX::FakeWidget\n")))
    assert explain_command(None, True) == codes.FOUND
    assert json.loads(capsys.readouterr().out)[0]["entry"] == CUSTOM


# ---- the message index ------------------------------------------------------------------------------

def test_messages_and_the_entries_citing_them(fixture_corpus):
    entries = load_all(fixture_corpus)
    index = messages.load_all(fixture_corpus, entries)
    assert set(index) == {"fake-broadcast-error", "fake-op-not-support"}
    cited = [(e.slug, s.id) for e, s in messages.cited_by("fake-broadcast-error", entries)]
    assert cited == [(CUSTOM, "broadcast-error"), (NAN, "broadcast-error")]
    assert index["fake-broadcast-error"].causes[0].url == "https://github.com/example/fake/issues/3"


@pytest.mark.parametrize("change, field", [
    ({"generic": "sometimes"}, "generic"),
    ({"pattern": "Broad cast error("}, "(root)"),
    ({"example": "something else"}, "(root)"),
    ({"causes": [{"ref": "not a ref", "cause": "x"}]}, "causes.0.ref"),
    ({"engines": ["tensorrt"]}, "engines.0"),
    ({"id": "another-id"}, "id"),
    ({"template": "Broad cast failure, dim1 = <n>"}, "(root)"),  # not the example's text
    ({"synonyms": ["broadcast", "=="]}, "synonyms.1"),  # no word: the site's search cannot find it
], ids=["generic", "regex", "example", "ref", "engine", "id", "template", "synonym"])
def test_a_bad_message_file_is_one_line_naming_file_and_field(change, field, fixture_corpus):
    path = fixture_corpus / "repros" / "_messages" / "fake-broadcast-error.yaml"
    data = {**yaml.safe_load(path.read_text()), **change}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(KBError) as e:
        messages.load_all(fixture_corpus)
    assert "fake-broadcast-error.yaml" in str(e.value) and f"field '{field}'" in str(e.value)
    assert "\n" not in str(e.value)


def test_an_entry_line_that_is_a_known_message_must_cite_it(fixture_corpus):
    """Uncited, a generic line would read as the entry's own proof (a bare `extract ... failed` did for KB059)."""
    page = fixture_corpus / "repros" / "fake-custom-op-broadcast" / "README.md"
    page.write_text(page.read_text().replace("    message: fake-broadcast-error\n", ""))
    with pytest.raises(KBError) as e:
        messages.load_all(fixture_corpus, load_all(fixture_corpus))
    assert "fake-custom-op-broadcast/README.md" in str(e.value) and "cite it" in str(e.value)
    assert "'fake-broadcast-error'" in str(e.value) and "\n" not in str(e.value)


def test_a_line_of_another_engines_message_need_not_cite_it(fixture_corpus):
    """The words of one engine's message in another engine's line (onnx2ncnn's `<Op> not supported yet` in pnnx's
    `reshape tensor with batch index 1 is not supported yet!`) are not an instance of it."""
    page = fixture_corpus / "repros" / "fake-custom-op-broadcast" / "README.md"
    page.write_text(page.read_text().replace("    message: fake-broadcast-error\n", ""))
    path = fixture_corpus / "repros" / "_messages" / "fake-broadcast-error.yaml"
    path.write_text(path.read_text().replace("engines: [mnn, ncnn]", "engines: [ncnn]"))
    messages.load_all(fixture_corpus, load_all(fixture_corpus))


def test_real_corpus_citations_resolve():
    """Every message the corpus's entries cite is in its index, and every index file is valid."""
    messages.load_all(ROOT, load_all(ROOT))


def test_message_pages(fixture_corpus):
    from kb.site import generate
    from kb.site.messages import message_link

    site = generate.render(fixture_corpus)
    page = site.pages["messages/fake-broadcast-error.md"]
    # titled by the message, not a sample: without a `template`, the example with its values as <n>
    assert ("Broad cast error, dim1 = <n>, dim2 = <n>", "messages/fake-broadcast-error.md") in site.message_nav
    assert f"(../{CUSTOM}.md)" in page and f"(../{NAN}.md)" in page
    assert "**How to tell:** the model was converted with --allowCustomOp" in page  # in words
    assert "(?" not in page and "\\d" not in page and "\\w" not in page  # never a regex
    # ranked: the entries (numbered) before the upstream reports
    assert page.index("1. [KB9") < page.index("2. [KB9") < page.index("[example/fake#3]")
    assert "[example/fake#3](https://github.com/example/fake/issues/3)" in page
    assert "(upstream, not measured here)" in page  # an upstream cause never reads as a verdict
    assert "3 known causes print it" in page
    sig = next(s for e in load_all(fixture_corpus) for s in e.meta.signatures if s.message == "fake-broadcast-error")
    link = message_link(sig, messages.load_all(fixture_corpus))
    assert 'href="../messages/fake-broadcast-error/"' in link and "generic" in link


# ---- bad logs: one line naming the file, a code of its own -------------------------------------------

def test_missing_and_directory(fixture_corpus, tmp_path):
    for path, code in ((tmp_path / "nope.log", codes.MISSING), (tmp_path, codes.IS_DIRECTORY)):
        with pytest.raises(KBError) as e:
            explain_command(str(path), False)
        assert e.value.code == code and path.name in str(e.value)


@pytest.mark.parametrize("data, code", [
    (b"", codes.EMPTY_LOG),
    (b"\n  \r\n\t\n", codes.EMPTY_LOG),
    (bytes(range(256)) * 64, codes.BINARY_LOG),
    (b"\x7fELF\x02\x01\x01\x00" + bytes(2000), codes.BINARY_LOG),
    (b"\x1f\x8b\x08\x00" + bytes(range(200, 256)) * 40, codes.BINARY_LOG),  # a gzipped log
], ids=["empty", "blank", "binary", "executable", "gzip"])
def test_empty_and_binary_logs(data, code, fixture_corpus, tmp_path):
    path = tmp_path / "build.log"
    path.write_bytes(data)
    with pytest.raises(KBError) as e:
        explain_command(str(path), False)
    assert e.value.code == code and "build.log" in str(e.value) and "\n" not in str(e.value)


def test_a_huge_log_file_is_refused_without_reading_it(fixture_corpus, tmp_path):
    path = tmp_path / "huge.log"
    with path.open("wb") as f:
        f.truncate(logfile.MAX_BYTES + 1)  # sparse: nothing is written, nothing may be read
    with pytest.raises(KBError) as e:
        explain_command(str(path), False)
    assert e.value.code == codes.LOG_TOO_LARGE and "tail" in e.value.problem


def test_a_huge_log_on_stdin_is_refused_while_streaming(fixture_corpus, monkeypatch):
    monkeypatch.setattr(logfile, "MAX_BYTES", 10_000)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"fine line\n" * 5000)))
    with pytest.raises(KBError) as e:
        explain_command("-", False)
    assert e.value.code == codes.LOG_TOO_LARGE and "<stdin>" in str(e.value)


def test_no_log_on_a_terminal(fixture_corpus, monkeypatch):
    class Tty(io.TextIOWrapper):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty(io.BytesIO()))
    with pytest.raises(KBError) as e:
        explain_command(None, False)
    assert "pipe the log in" in e.value.problem


# ---- through the command line ----------------------------------------------------------------------


def kb(root, *args, stdin=None):
    import os

    env = {**os.environ, "KB_ROOT": str(root)}
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, cwd=ROOT, input=stdin, env=env)


def test_cli_explain_file_and_stdin(fixture_corpus, tmp_path):
    log = tmp_path / "a.log"
    log.write_bytes(b"\x1b[31mThese Op Not Support: ONNX::FakeWidget\x1b[0m\r\n" + BROADCAST.encode() + b"\r\n")
    p = kb(fixture_corpus, "explain", str(log), "--json")
    assert p.returncode == codes.FOUND, p.stderr
    assert [(r["entry"], r["confidence"]) for r in json.loads(p.stdout)] == [(CUSTOM, "match"), (NAN, "possible")]
    p = kb(fixture_corpus, "explain", stdin=BROADCAST.encode() + b"\n")
    assert p.returncode == codes.FOUND and b"KB901" in p.stdout and b"is a generic message" in p.stdout
    p = kb(fixture_corpus, "explain", stdin=b"nothing to see\n")
    assert p.returncode == codes.NOTHING_FOUND and b"?q=" in p.stdout


def test_cli_bad_log_is_one_line(fixture_corpus, tmp_path):
    blob = tmp_path / "blob.log"
    blob.write_bytes(bytes(range(256)) * 8)
    for args, code in (([str(blob)], codes.BINARY_LOG), ([str(tmp_path / "nope.log")], codes.MISSING),
                       ([], codes.EMPTY_LOG)):
        p = kb(fixture_corpus, "explain", *args, stdin=b"")
        assert p.returncode == code
        assert len(p.stderr.strip().splitlines()) == 1 and b"Traceback" not in p.stderr


# ---- a report in the user's own words ---------------------------------------------------------

def test_prose_in_chinese_finds_its_entry_as_possible_with_the_words_that_matched(explain):
    code, rows = explain("自定义算子 接 InstanceNormalization 以后 mnn 运行报 广播 错误\n")
    assert code == codes.FOUND and entries_of(rows)[0] == "fake-custom-op-broadcast"
    assert rows[0]["confidence"] == "possible" and "自定义" in rows[0]["words"]


def test_prose_in_english_finds_its_entry(explain):
    code, rows = explain("after exporting, the sqrt of the centred input gives nan outputs on ncnn\n")
    assert entries_of(rows)[:1] == ["fake-pow-nan"] and rows[0]["confidence"] == "possible"


def test_words_nobody_uses_find_nothing_and_words_never_make_a_match(explain):
    assert explain("the weather is nice and my cat sleeps\n")[0] == codes.NOTHING_FOUND
    code, rows = explain(f"These Op Not Support: ONNX::FakeWidget\n{BROADCAST}\ncustom op 自定义算子 广播\n")
    assert confidences(rows)["fake-custom-op-broadcast"] == "match"  # the line decides; words only order


def test_a_message_retold_in_lower_case_is_found(explain):
    code, rows = explain("these op not support: onnx::fakewidget\n")
    assert "fake-custom-op-broadcast" in entries_of(rows)


# ---- the reply to paste -----------------------------------------------------------------------

def test_a_markdown_reply_quotes_the_users_line_and_gives_status_workaround_and_anchored_links(fixture_corpus,
                                                                                          tmp_path, capsys):
    path = tmp_path / "issue.log"
    path.write_text(f"converting my model...\nThese Op Not Support: ONNX::FakeWidget | \n{BROADCAST}\n")
    assert explain_command(str(path), False, markdown=True) == codes.FOUND
    text = capsys.readouterr().out
    assert "These Op Not Support: ONNX::FakeWidget" in text  # the user's own line
    assert "**Status:** onnxruntime 1.32.0: affected" in text
    assert "- Verified workaround (onnxruntime 1.32.0): Export the custom op's computation with standard ops." in text
    assert "/fake-custom-op-broadcast/#workaround" in text and "#sig-unsupported-op" in text
    assert len(text.splitlines()) <= 30


def test_a_generic_line_gets_a_reply_with_its_own_numbers_and_the_message_page(fixture_corpus, tmp_path, capsys):
    path = tmp_path / "issue.log"
    path.write_text("Broad cast error, dim1 = 16, dim2 = 24\n")
    explain_command(str(path), False, markdown=True)
    text = capsys.readouterr().out
    assert "`Broad cast error, dim1 = 16, dim2 = 24`" in text and "/messages/fake-broadcast-error/" in text


def test_a_native_ncnn_layer_name_is_no_evidence():
    """ncnn defines ArgMax (off in default builds): `layer ArgMax not exists` is printed for any converter."""
    from kb.match.rules import native_ncnn_layer

    assert native_ncnn_layer("ArgMax") and native_ncnn_layer("Convolution")
    assert not native_ncnn_layer("TopK") and not native_ncnn_layer("torch.std")


# ---- evidence that two entries claim names neither ---------------------------------------------

def test_a_line_two_entries_name_literally_is_no_evidence_for_either(explain):
    # issue 19: 'Gather not supported yet!' is claimed by two onnx2ncnn entries; one of them using the line
    # itself as evidence must not turn it into a `match`
    sig = ("  - id: widget\n    kind: log\n    pattern: 'FakeGather not supported yet'\n"
           "    example: 'FakeGather not supported yet!'\n    message: fake-op-not-support\n    summary: s\n")
    add_signature(explain.root, NAN, sig.replace("    summary: s\n", "    summary: s\n    evidence: ['FakeGather not supported yet']\n"))
    _, rows = explain("FakeGather not supported yet!\n")
    assert confidences(rows) == {NAN: "match"}  # alone, the entry that names it is matched
    add_signature(explain.root, CUSTOM, sig)
    _, rows = explain("FakeGather not supported yet!\n")
    assert confidences(rows) == {NAN: "possible", CUSTOM: "possible"}


def test_the_message_index_compares_case_insensitively(explain):
    # a message retold in lower case still points at its page (the generic message's known causes)
    from kb import messages as message_index
    from kb.match.explain import explain as run

    entries = load_all(explain.root)
    seen: list = []
    ranked, _ = run("a.log", io.BytesIO(BROADCAST.lower().encode() + b"\n"), entries,
                    message_index.load_all(explain.root, entries), seen)
    assert [m.id for m in seen] == ["fake-broadcast-error"]
    assert {x.entry.slug: x.confidence for x in ranked} == {CUSTOM: "possible", NAN: "possible"}


def test_a_log_naming_its_engine_gets_that_engines_page_of_a_shared_line(explain):
    """The shell's 'Floating point exception' has a page for MNN and one for ncnn: a log that names its engine shows
    that engine's page alone; a bare line, both."""
    from kb import messages as message_index
    from kb.match.explain import explain as run

    folder = explain.root / "repros" / "_messages"
    for engine in ("mnn", "ncnn"):
        (folder / f"fake-{engine}-fpe.yaml").write_text(
            f"id: fake-{engine}-fpe\nengines: [{engine}]\npattern: 'Floating point exception'\n"
            f"example: 'Floating point exception (core dumped)'\nsummary: s\ngeneric: true\n", encoding="utf-8")
    entries = load_all(explain.root)
    index = message_index.load_all(explain.root, entries)

    def pages(log: str) -> list[str]:
        seen: list = []
        run("a.log", io.BytesIO(log.encode()), entries, index, seen)
        return sorted(m.id for m in seen)

    assert pages("Start to Optimize the MNN Net...\nFloating point exception (core dumped)\n") == ["fake-mnn-fpe"]
    assert pages("./onnx2ncnn a.onnx a.param a.bin\nFloating point exception (core dumped)\n") == ["fake-ncnn-fpe"]
    assert pages("Floating point exception (core dumped)\n") == ["fake-mnn-fpe", "fake-ncnn-fpe"]


def test_words_that_describe_a_message_lead_to_its_page_as_a_guess(explain, fixture_corpus, tmp_path, capsys):
    """No line of the report is known, and its words rank a message page above every entry (the message's
    synonyms: "broadcast dims differ"): the text and the reply point at the page, as a guess."""
    report = "after conversion it says the broadcast dims differ, what is wrong?\n"
    code, text = explain(report, as_json=False)
    assert "describe the message \"Broad cast error, dim1 = <n>, dim2 = <n>\" best" in text + explain.err
    assert "/messages/fake-broadcast-error/" in text + explain.err
    path = tmp_path / "issue.log"
    path.write_text(report)
    explain_command(str(path), False, markdown=True)
    reply = capsys.readouterr().out
    assert reply.startswith("**Not a diagnosis yet:** your description sounds like the message") and "fake-broadcast-error" in reply
    # the line itself: the message is shown, not guessed
    _, text = explain(f"{BROADCAST}\n", as_json=False)
    assert "describe the message" not in text + explain.err


# ---- the op a line says its engine lacks: onnx's own node tests of it there --------------------

def test_a_line_naming_an_op_the_engine_lacks_adds_the_ops_node_test_figure(fixture_corpus, tmp_path, capsys):
    """`GridSample not supported yet!` (KB072's signature example) names an op onnx2ncnn lacks: below the message
    page, kb explain gives how many of onnx's node tests of GridSample work on onnx2ncnn (conformance/), with the
    op page; in the reply to paste too, after its message page. An op with no node test says nothing."""
    shutil.copytree(ROOT / "conformance", fixture_corpus / "conformance")
    shutil.copy(ROOT / "repros" / "_messages" / "onnx2ncnn-not-supported.yaml", fixture_corpus / "repros" / "_messages")
    path = tmp_path / "convert.log"
    path.write_text("onnx2ncnn model.onnx model.param model.bin\nGridSample not supported yet!\n")
    assert explain_command(str(path), False) == codes.NOTHING_FOUND  # no entry of this corpus: unchanged
    text = capsys.readouterr().out
    page = text.index("/messages/onnx2ncnn-not-supported/")
    figure = re.search(r"onnx2ncnn a4d2ea1: GridSample: 0 of (\d+) ONNX node tests work \((\d+) fail to convert: "
                       r"`[^`]*GridSample not supported yet!`\); see (\S+)", text)
    assert figure and figure[1] == figure[2] and figure[3].endswith("/ops/GridSample/") and figure.start() > page
    explain_command(str(path), False, markdown=True)
    reply = capsys.readouterr().out
    assert reply.startswith("**Known message:** `GridSample not supported yet!`")
    assert reply.index("/messages/onnx2ncnn-not-supported/") < reply.index("- onnx2ncnn a4d2ea1: GridSample: 0 of")
    for unknown in ("Frobnicate not supported yet!", "tensor is not supported yet!"):
        path.write_text(unknown + "\n")
        explain_command(str(path), False)
        explain_command(str(path), False, markdown=True)
        assert "node tests" not in capsys.readouterr().out


@pytest.mark.parametrize("named, op, fails", [
    ("aten::xlogy", "torch.xlogy", True),  # pnnx's aten:: name, the ledger's torch one
    ("Tensor.masked_fill", "torch.masked_fill", True),  # a method, whose case torch's API names torch.X
    ("torch.cumsum", "torch.cumsum", False),  # an op pnnx converts: its figure says its samples work
])
def test_a_line_naming_an_op_pnnx_left_under_its_torch_name_adds_its_torch_samples(fixture_corpus, tmp_path, capsys,
                                                                                 named, op, fails):
    """ncnn's "layer <name> not exists or registered" for an op pnnx left as it found it: below the message page,
    the op's figure in torch's own op samples through pnnx (conformance/pnnx-torch.yaml), the ledger's words,
    never a failure it did not record."""
    import yaml

    shutil.copytree(ROOT / "conformance", fixture_corpus / "conformance")
    shutil.copy(ROOT / "repros" / "_messages" / "ncnn-layer-not-registered.yaml", fixture_corpus / "repros" / "_messages")
    path = tmp_path / "run.log"
    path.write_text(f"layer {named} not exists or registered\n")
    explain_command(str(path), False)
    text = capsys.readouterr().out
    figure = re.search(rf"pnnx-torch (\S+): {re.escape(op)}: (\d+) of (\d+) torch op samples work(.*); see (\S+)", text)
    assert figure and figure[5].endswith(f"/ops/{op}/"), text
    runs = yaml.safe_load((ROOT / "conformance" / "pnnx-torch.yaml").read_text())["cases"]
    newest = [c["runs"][-1]["outcome"] for c in runs.values() if c["op"] == op]
    assert int(figure[2]) == newest.count("works") and int(figure[3]) == len(newest)
    assert (int(figure[2]) < int(figure[3])) == fails
    assert ("fail to run" in figure[4] or "fails to run" in figure[4]) == fails


def test_a_generic_message_with_no_upstream_cause_counts_the_entries_only(explain):
    import yaml

    path = explain.root / "repros" / "_messages" / "fake-broadcast-error.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    path.write_text(yaml.safe_dump({**data, "causes": []}, allow_unicode=True), encoding="utf-8")
    code, out = explain(f"{BROADCAST}\n", as_json=False)
    assert f'The line "{BROADCAST}" is a generic message: 2 known causes print it (KB901, KB903 here), so this line' in out
    assert "0 upstream" not in out
