"""`kb explain --format markdown`, run as a support engineer runs it, on real users' logs (tests/data/real_logs)
against this checkout's corpus: the reply to paste quotes the user's own line, gives the status on the
release asked about, the verified workaround and an https permalink with a section anchor.

The statuses come from the committed knowledge (expected.yaml) and this machine's records; no engine runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from kb.entries import load_all

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / "tests" / "data" / "real_logs"
# alibaba/MNN#3922's log and the entry its label names (tests/data/real_logs/labels.yaml): the data, not a slug here
QDQ = next(r["label"] for r in yaml.safe_load((LOGS / "labels.yaml").read_text(encoding="utf-8"))
           if r["file"] == "mnn-3922.log")
PUBLISHED = re.search(r"^site_url:\s*(\S+)", (REPO / "mkdocs.yml").read_text(encoding="utf-8"), re.M)[1]


def kb_explain(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("KB_SITE_URL", "KB_ROOT")}  # the defaults, as a user has
    return subprocess.run([str(Path(sys.executable).parent / "kb"), "explain", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300)


def test_the_published_address_is_https_and_the_default_for_links():
    assert PUBLISHED.startswith("https://") and PUBLISHED.endswith("/")
    code = "from kb.match.links import page_url; print(page_url('x'))"
    env = {k: v for k, v in os.environ.items() if k not in ("KB_SITE_URL", "KB_ROOT")}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env)
    assert p.stdout.strip() == f"{PUBLISHED}x/", p.stderr


def test_a_real_qdq_log_gets_a_short_reply_with_its_line_the_status_the_workaround_and_an_anchored_link():
    log = LOGS / "mnn-3922.log"
    p = kb_explain("--format", "markdown", "--engine", "mnn==3.6.1", str(log))
    assert p.returncode == 1, p.stderr[-2000:]  # 1: a known problem was found
    reply = p.stdout
    lines = reply.splitlines()
    assert len(lines) <= 30, reply
    # the user's own line, as their log has it
    own = [ln.strip() for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if "Tensor shape" in ln]
    assert own and any(o in reply for o in own), reply
    assert "MNN 3.6.1: affected" in reply
    entry = next(e for e in load_all(REPO) if e.slug == QDQ)
    assert entry.meta.id in reply
    fix = next(ln for ln in lines if ln.startswith("- Verified workaround (MNN 3.6.1)"))
    assert any(w.summary in fix for w in entry.meta.workarounds), fix
    links = re.findall(r"https://\S+", reply)
    anchored = [u for u in links if re.fullmatch(re.escape(f"{PUBLISHED}{QDQ}/") + r"#(workaround|sig-[a-z0-9-]+)", u)]
    assert anchored, links
    sig_ids = {s.id for s in entry.meta.signatures}
    assert all(u.split("#sig-")[1] in sig_ids for u in anchored if "#sig-" in u)  # anchors the page has


def test_a_generic_message_gets_a_reply_that_quotes_the_users_own_numbers():
    """mnn-2310.log (alibaba/MNN#2310) prints MNN's generic broadcast error with its own sizes."""
    log = LOGS / "mnn-2310.log"
    line = next(ln.strip() for ln in log.read_text(encoding="utf-8", errors="replace").splitlines()
                if "Broad cast error" in ln)
    numbers = re.search(r"dim1 = \d+, dim2 = \d+", line)[0]
    p = kb_explain("--format", "markdown", str(log))
    reply = p.stdout
    assert numbers in reply, reply
    from kb import messages

    # the message page of the user's line, found by the index's own patterns
    m = next(m for m in messages.load_all(REPO).values() if re.search(m.pattern, line))
    if re.search(r"dim1 = \d+, dim2 = \d+", m.example)[0] != numbers:
        assert re.search(r"dim1 = \d+, dim2 = \d+", m.example)[0] not in reply  # never the catalogue's sample
    assert f"{PUBLISHED}messages/{m.id}/" in reply
    assert len(reply.splitlines()) <= 30


def test_a_line_only_the_message_index_knows_gets_its_message_page_not_a_guess_from_words(tmp_path):
    """A message no entry cites (its causes are upstream reports): the reply leads with the user's line and the
    message page, and marks entries found by the report's words as a guess."""
    from kb import messages

    corpus = load_all(REPO)
    cited = {s.message for e in corpus for s in e.meta.signatures}
    m = next(m for m in messages.load_all(REPO, corpus).values() if m.id not in cited and m.causes)
    log = tmp_path / "user.log"
    log.write_text(f"[2026-11-26 10:00:01] {m.example}\nconvert resize model failed\n", encoding="utf-8")
    reply = kb_explain("--format", "markdown", str(log)).stdout
    first = reply.splitlines()[0]
    assert first.startswith("**Known message:**") and m.example.strip()[:40] in first, reply
    assert f"{PUBLISHED}messages/{m.id}/" in reply
    assert "KB0" not in first  # no entry is the diagnosis


def test_pnnx_lines_that_say_not_supported_yet_do_not_read_as_onnx2ncnns_message(tmp_path):
    """onnx2ncnn prints '<ONNX op> not supported yet!'; pnnx prints 'UnaryOp sign not supported yet' (KB225, measured)
    and 'permute 5-rank tensor is not supported yet' (KB073): those name no ONNX op onnx2ncnn lacks."""
    page = f"{PUBLISHED}messages/onnx2ncnn-not-supported/"
    for line, onnx2ncnn in (("UnaryOp sign not supported yet", False), ("permute 5-rank tensor is not supported yet", False),
                            ("Erf not supported yet!", True), ("tile not supported yet", True)):
        log = tmp_path / "user.log"
        log.write_text(f"{line}\n", encoding="utf-8")
        assert (page in kb_explain(str(log)).stdout) is onnx2ncnn, line


def test_ncnns_param_parse_lines_match_an_entry_only_for_its_own_layer(tmp_path):
    """'ParamDict load_param <n> <layer> failed' follows any value ncnn cannot parse: a bare one is only possible for
    the entries that print it (with its message page); the layer an entry names makes that entry a match."""
    page = f"{PUBLISHED}messages/ncnn-paramdict-parse-failed/"
    for line, matched in (("ParamDict load_param 7 conv_3 failed", set()), ("ParamDict parse value failed", set()),
                          ("ParamDict load_param 23 Clip_40 failed", {"KB140"}),
                          ("ParamDict load_param 4 /Resize_1 failed", {"KB239"})):
        log = tmp_path / "user.log"
        log.write_text(f"{line}\n", encoding="utf-8")
        out = kb_explain(str(log)).stdout
        assert {m for m in re.findall(r"^\d+\. (KB\d+) .*\[match\]$", out, re.M)} == matched and page in out, out


def test_a_message_whose_causes_are_all_entries_is_not_said_to_have_none(tmp_path):
    """MNN 3.4.0+'s line for a missing output: its message page (mnn-missing-output) lists no upstream report, only the
    entries that print its 3.0-3.2 form; kb explain links it without counting "0 known upstream causes"."""
    log = tmp_path / "user.log"
    log.write_text("PipelineModule:: Can't find output hid from the model:\n", encoding="utf-8")
    out = kb_explain(str(log)).stdout
    assert f"{PUBLISHED}messages/mnn-missing-output/" in out and "0 known upstream" not in out, out


def test_the_reply_names_a_known_message_the_log_shows_that_no_result_cites(tmp_path):
    """The text output says "The log also shows ..." for such a line; the reply to paste says it too."""
    from kb import messages

    corpus = load_all(REPO)
    cited = {s.message for e in corpus for s in e.meta.signatures}
    m = next(m for m in messages.load_all(REPO, corpus).values() if m.id not in cited and m.causes)
    log = tmp_path / "user.log"
    log.write_text((LOGS / "mnn-3922.log").read_text(encoding="utf-8") + f"\n{m.example}\n", encoding="utf-8")
    page = f"{PUBLISHED}messages/{m.id}/"
    assert page in kb_explain(str(log)).stdout
    reply = kb_explain("--format", "markdown", str(log)).stdout
    assert reply.startswith("**Diagnosis:**") and page in reply, reply
