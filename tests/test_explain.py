"""`kb explain`: real-looking logs lead to the right entries, best first; bad logs get one line."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kb.entries import load_all
from kb.errors import KBError
from kb.match import codes, logfile
from kb.match.explain import explain_command, literal_chars

ROOT = Path(__file__).resolve().parent.parent
KB001 = "mnn-groupnorm-unregistered-custom-op"
KB003 = "mnn-qdq-input-permutation"
KB004 = "ncnn-onnx2ncnn-layernorm"
KB005 = "mnn-multi-input-gru-quantization"


@pytest.fixture
def explain(tmp_path, capsys):
    """Write the log (text, or bytes as they are), run explain_command; return (code, rows), or
    (code, text) for as_json=False. What went to stderr is kept in run.err."""

    def run(log, as_json=True):
        path = tmp_path / "build.log"
        path.write_bytes(log if isinstance(log, bytes) else log.encode())
        code = explain_command(str(path), as_json)
        out = capsys.readouterr()
        run.err = out.err
        return code, json.loads(out.out) if as_json else out.out

    return run


def entries_of(rows):
    return [r["entry"] for r in rows]


# ---- every log signature of the corpus, as it shows up in real logs ---------------------------

LOG_SIGNATURES = [(e.slug, s) for e in load_all() for s in e.meta.signatures if s.kind == "log" and s.example]


def decorated(line):
    """The example as a log shows it: a timestamp, a source path, colours, a Windows line end."""
    return (f"\x1b[32m[2026-11-21 15:49:46.123]\x1b[0m C:\\work\\MNN\\tools\\converter\\source\\x.cpp:220: "
            f"\x1b[1;31m{line}\x1b[0m\r\n")


@pytest.mark.parametrize("slug, sig", LOG_SIGNATURES, ids=[f"{s}/{g.id}" for s, g in LOG_SIGNATURES])
def test_each_signature_example_leads_to_its_entry(slug, sig, explain):
    log = "Start to Convert Other Model Format To MNN Model...\r\n" + decorated(sig.example) + "Done\r\n"
    code, rows = explain(log)
    assert code == codes.FOUND
    best = rows[0]["score"]
    assert slug in [r["entry"] for r in rows if r["score"] == best]  # at the top (ties: a shared message)
    row = next(r for r in rows if r["entry"] == slug)
    assert row["line_number"] == 2
    assert sig.example in row["line"] and "\x1b" not in row["line"]
    assert row["url"] == f"http://127.0.0.1:8000/{slug}/"


# ---- other names and numbers than the reproducer's ---------------------------------------------

@pytest.mark.parametrize("line, slug", [
    ("Broad cast error, dim1 = 512, dim2 = 64", KB001),
    ("These Op Not Support: ONNX::DeformConv2dCustom", KB001),
    ("Error for compute convolution shape, inputCount:1, outputCount:32, KH:7, KW:7, group:1", KB003),
    ("inputChannel: 3, batch:1, width:640, height:640. Input data channel may be mismatch", KB003),
    ("Reshape error: 16 -> 256", KB005),
    ("Can't find input extraTensorDescribe for /decoder/rnn/GRU_output_0", KB005),
    ("layer LayerNormalization not exists or registered", KB004),
])
def test_other_numbers_and_names(line, slug, explain):
    code, rows = explain(f"14:02:11.801 [main] {line} (at /opt/build/src/file.cpp:88)\n")
    assert code == codes.FOUND and rows[0]["entry"] == slug


def test_a_python_traceback(explain):
    log = """Traceback (most recent call last):
  File "/home/me/deploy/run_mnn.py", line 41, in <module>
    out = interpreter.runSession(session)
  File "/home/me/.venv/lib/python3.10/site-packages/MNN/__init__.py", line 120, in runSession
    raise RuntimeError(msg)
RuntimeError: Broad cast error, dim1 = 384, dim2 = 192
"""
    code, rows = explain(log)
    assert entries_of(rows) == [KB001]
    assert rows[0]["line_number"] == 6 and rows[0]["line"].startswith("RuntimeError: Broad cast error")


def test_a_pytest_failure(explain):
    log = """============================= test session starts ==============================
collected 3 items

tests/test_deploy.py ..F                                                 [100%]

=================================== FAILURES ===================================
_______________________________ test_ncnn_runs _________________________________

    def test_ncnn_runs():
        net = ncnn.Net()
>       assert net.load_param("model.param") == 0
E       assert -1 == 0
----------------------------- Captured stderr call -----------------------------
layer LayerNormalization not exists or registered
=========================== short test summary info ============================
FAILED tests/test_deploy.py::test_ncnn_runs - assert -1 == 0
"""
    code, rows = explain(log)
    assert entries_of(rows) == [KB004]
    assert rows[0]["signature"] == "layernormalization-not-registered"


def test_a_log_mixing_several_problems_ranks_them(explain):
    log = "\n".join([
        "[15:49:46] :220: These Op Not Support: ONNX::QLinearConv",  # another problem's step, same message
        "mnnconvert -f ONNX --modelFile a.onnx --MNNModel a.mnn --allowCustomOp",
        "Broad cast error, dim1 = 256, dim2 = 128",
        "Compute Shape Error for /gn/Mul_output_0",
        "Can't run session because not resized",
        "onnx2ncnn b.onnx b.param b.bin",
        "LayerNormalization not supported yet!",
        "layer LayerNormalization not exists or registered",
    ]) + "\n"
    code, rows = explain(log)
    assert entries_of(rows)[:2] == [KB001, KB004]  # three and two signatures
    assert KB003 in entries_of(rows)  # shares "Compute Shape Error", so it is listed, lower
    assert rows[0]["score"] > rows[-1]["score"]
    kb001 = rows[0]
    assert {s["id"] for s in kb001["signatures"]} == {"unsupported-op", "broadcast-error", "compute-shape-error"}


def test_repeated_lines_are_counted_not_repeated(explain):
    _, rows = explain("Compute Shape Error for a\n" * 3 + "Broad cast error, dim1 = 2, dim2 = 1\n")
    sig = next(s for s in rows[0]["signatures"] if s["id"] == "compute-shape-error")
    assert sig["count"] == 3 and sig["line_number"] == 1


# ---- encodings and line ends -----------------------------------------------------------------

def test_windows_line_ends_and_utf16(explain):
    text = "PS C:\\m> mnnconvert ...\r\nReshape error: 1 -> 64\r\nCan't find input extraTensorDescribe for h\r\n"
    code, rows = explain(text.encode("utf-16"))  # what PowerShell's `>` writes
    assert code == codes.FOUND and rows[0]["entry"] == KB005
    assert sorted(s["line_number"] for s in rows[0]["signatures"]) == [2, 3]


def test_progress_bars_with_bare_carriage_returns(explain):
    log = "calibrating 10%\rcalibrating 50%\rcalibrating 100%\rReshape error: 1 -> 128\n"
    _, rows = explain(log)
    assert rows[0]["entry"] == KB005 and rows[0]["line"] == "Reshape error: 1 -> 128"


def test_a_very_long_line_is_cut_not_loaded(explain):
    line = "Broad cast error, dim1 = 8, dim2 = 4 " + "x" * (3 * logfile.MAX_LINE)
    code, rows = explain(line + "\nnext line\n")
    assert code == codes.FOUND
    assert len(rows[0]["line"]) <= 310


def test_crlf_split_across_chunks_keeps_line_numbers(monkeypatch):
    monkeypatch.setattr(logfile, "HEAD", 3)
    monkeypatch.setattr(logfile, "CHUNK", 3)
    got = [(first + i, line) for first, block in logfile.blocks("t", io.BytesIO(b"ab\r\ncd\r\n\r\nef"))
           for i, line in enumerate(block)]
    assert got == [(1, "ab"), (2, "cd"), (3, ""), (4, "ef")]


# ---- symptoms many causes share -----------------------------------------------------------------

def test_a_bare_segfault_is_not_pinned_on_an_entry(explain, capsys):
    code, rows = explain("python infer.py\nSegmentation fault (core dumped)\n")
    assert (code, rows) == (codes.NOTHING_FOUND, [])


def test_a_segfault_of_the_entrys_engine_is_a_weak_match(explain):
    code, rows = explain("./quantized.out model.mnn quant.mnn config.json  # MNN 3.6.1\n"
                         "Segmentation fault (core dumped)\n")
    assert code == codes.FOUND and entries_of(rows) == [KB005]
    assert rows[0]["signatures"][0]["weak"] is True


def test_specificity_counts_fixed_text_only():
    assert literal_chars(r"Reshape error: \d+ -> \d+") == len("Reshape error:  -> ")
    assert literal_chars("SIGSEGV") == 7
    assert literal_chars(r"absMaxV:[\d.]+ - DiffMax [\d.]+") == len("absMaxV: - DiffMax ")


# ---- nothing matches -----------------------------------------------------------------------------

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


def test_text_output(explain):
    code, out = explain("Broad cast error, dim1 = 256, dim2 = 128\nCompute Shape Error for /gn/Mul_output_0\n",
                        as_json=False)
    assert code == codes.FOUND
    assert "1. KB001  MNN: a custom op followed by GroupNorm" in out
    assert "line 1 [broadcast-error]: Broad cast error, dim1 = 256, dim2 = 128" in out
    assert f"page: http://127.0.0.1:8000/{KB001}/" in out
    assert out.index("KB001") < out.index("KB003")


def test_reads_stdin(monkeypatch, capsys):
    data = b"Reshape error: 1 -> 128\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert explain_command(None, True) == codes.FOUND
    assert json.loads(capsys.readouterr().out)[0]["entry"] == KB005


# ---- bad logs: one line naming the file, a code of its own ----------------------------------------

def test_missing_and_directory(tmp_path):
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
def test_empty_and_binary_logs(data, code, tmp_path):
    path = tmp_path / "build.log"
    path.write_bytes(data)
    with pytest.raises(KBError) as e:
        explain_command(str(path), False)
    assert e.value.code == code and "build.log" in str(e.value) and "\n" not in str(e.value)


def test_a_huge_log_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "huge.log"
    with path.open("wb") as f:
        f.truncate(logfile.MAX_BYTES + 1)  # sparse: nothing is written, nothing may be read
    with pytest.raises(KBError) as e:
        explain_command(str(path), False)
    assert e.value.code == codes.LOG_TOO_LARGE and "tail" in e.value.problem


def test_a_huge_log_on_stdin_is_refused_while_streaming(monkeypatch):
    monkeypatch.setattr(logfile, "MAX_BYTES", 10_000)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"fine line\n" * 5000)))
    with pytest.raises(KBError) as e:
        explain_command("-", False)
    assert e.value.code == codes.LOG_TOO_LARGE and "<stdin>" in str(e.value)


def test_no_log_on_a_terminal(monkeypatch):
    class Tty(io.TextIOWrapper):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty(io.BytesIO()))
    with pytest.raises(KBError) as e:
        explain_command(None, False)
    assert "pipe the log in" in e.value.problem


# ---- through the command line, once `kb explain` is wired into kb.cli ----------------------------

def wired(command):
    from kb.cli import app

    return command in {c.name or c.callback.__name__ for c in app.registered_commands}


needs_cli = pytest.mark.skipif(not wired("explain"), reason="`kb explain` is not wired into kb/cli.py yet")


def kb(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, cwd=ROOT, input=stdin)


@needs_cli
def test_cli_explain_file_and_stdin(tmp_path):
    log = tmp_path / "a.log"
    log.write_bytes(b"\x1b[31mBroad cast error, dim1 = 1, dim2 = 2\x1b[0m\r\n")
    p = kb("explain", str(log), "--json")
    assert p.returncode == codes.FOUND, p.stderr
    assert json.loads(p.stdout)[0]["entry"] == KB001
    p = kb("explain", stdin=b"Reshape error: 1 -> 128\n")
    assert p.returncode == codes.FOUND and b"KB005" in p.stdout
    p = kb("explain", stdin=b"nothing to see\n")
    assert p.returncode == codes.NOTHING_FOUND and b"?q=" in p.stdout


@needs_cli
def test_cli_bad_log_is_one_line(tmp_path):
    blob = tmp_path / "blob.log"
    blob.write_bytes(bytes(range(256)) * 8)
    for args, code in (([str(blob)], codes.BINARY_LOG), ([str(tmp_path / "nope.log")], codes.MISSING),
                       ([], codes.EMPTY_LOG)):
        p = kb("explain", *args, stdin=b"")
        assert p.returncode == code
        assert len(p.stderr.strip().splitlines()) == 1 and b"Traceback" not in p.stderr
