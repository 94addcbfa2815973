"""`kb explain` rules out, by itself, the candidates a log contradicts (issue 29): a generic message that names
an op, a layer, a mode or a count (`These Op Not Support: ONNX::SpecAug`) refutes every entry whose evidence
needs another value there; such an entry is not listed, and no "to confirm it, check that the op listed is X"
is ever shown for an X the log already contradicts. Runs on this checkout's corpus (repros/), no engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb.match.report import explain_command

REPO = Path(__file__).resolve().parents[1]
CUSTOM_OP = "mnn-groupnorm-unregistered-custom-op"  # KB001: an op neither ONNX nor onnxruntime defines
LAYERNORM = "mnn-layernormalization-opset17"  # KB025: MNN's message naming LayerNormalization


@pytest.fixture
def kb(tmp_path, monkeypatch, capsys):
    """Run `kb explain` on a log against the real corpus: (json rows, text output, markdown reply)."""
    import json

    monkeypatch.setenv("KB_ROOT", str(REPO))

    def run(log: str):
        path = tmp_path / "issue.log"
        path.write_text(log, encoding="utf-8")
        out = []
        for as_json, markdown in ((True, False), (False, False), (False, True)):
            explain_command(str(path), as_json, markdown)
            got = capsys.readouterr()
            out.append(got.out if as_json else got.out + got.err)  # --json: the rows alone on stdout
        return json.loads(out[0] or "[]"), out[1], out[2]

    return run


# The entries that cite MNN's "These Op Not Support" today, in a corpus of their own: a later entry must not
# change the ranking this test asserts.
OP_NOT_SUPPORT = ["mnn-einsum-three-operands", CUSTOM_OP, "mnn-isnan-unsupported", LAYERNORM,
                  "mnn-onnx-integer-quantized-ops", "mnn-onnxsim-attention-fusion", "mnn-topk-dynamic-k"]


def test_a_custom_op_mnn_names_puts_the_custom_op_entry_first_and_rules_out_layernormalization(kb, tmp_path,
                                                                                              monkeypatch):
    import shutil

    root = tmp_path / "mnn"
    for slug in [*OP_NOT_SUPPORT, "_messages"]:
        shutil.copytree(REPO / "repros" / slug, root / "repros" / slug, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("KB_ROOT", str(root))  # after kb's own setting, so this one holds
    rows, text, reply = kb("These Op Not Support: ONNX::SpecAug\n")
    assert rows and rows[0]["entry"] == CUSTOM_OP, [r["entry"] for r in rows]
    assert rows[0]["confidence"] == "possible"  # nothing downstream fails: the mechanism is not shown
    assert LAYERNORM not in [r["entry"] for r in rows]
    assert "is LayerNormalization" not in text and "is LayerNormalization" not in reply


def test_the_op_the_entry_needs_is_still_found(kb):
    rows, _, _ = kb("These Op Not Support: ONNX::LayerNormalization\n")
    assert rows[0]["entry"] == LAYERNORM and rows[0]["confidence"] == "match"
    assert CUSTOM_OP not in [r["entry"] for r in rows]  # LayerNormalization is an ONNX op: no custom op


def test_one_of_several_ops_listed_is_enough(kb):
    rows, _, _ = kb("These Op Not Support: ONNX::SpecAug | ONNX::LayerNormalization |\n")
    assert LAYERNORM in [r["entry"] for r in rows]


# Lines that name an op or layer no entry is about, in each converter's own words, and ops of other entries.
FOREIGN = [
    ("These Op Not Support: ONNX::SpecAug", "SpecAug"),
    ("These Op Not Support: ONNX::GRU", "GRU"),
    ("These Op Not Support: Torch::gru", "gru"),
    ("SpecAug not supported yet!", "SpecAug"),
    ("Softsign not supported yet!", "Softsign"),
    ("layer SpecAug not exists or registered", "SpecAug"),
    ("layer nn.SpecAug not exists or registered", "nn.SpecAug"),
    ("Convert Onnx's Op spec_1 , type = SpecAug, failed, may be some node is not const", "SpecAug"),
    ("ort CreateSession failed Fatal error: com.microsoft:SpecAug(-1) is not a registered function/op", "SpecAug"),
]
NAMED = re.compile(r"\bthe (?:op|layer)s? (?:named|listed) (?:is|are) (?!not\b)(?:an? |one of )?([\w.:]+)", re.IGNORECASE)


def _cites(line: str) -> set[str]:
    """The ids of the entries that cite a message the line shows: those kb can check against the line."""
    from kb import messages as message_index
    from kb.entries import load_all

    entries = load_all(REPO)
    shown = {m.id for m in message_index.load_all(REPO, entries).values() if re.search(m.pattern, line, re.I)}
    return {e.meta.id for e in entries if any(s.message in shown for s in e.meta.signatures)}


@pytest.mark.parametrize("line, op", FOREIGN, ids=[op for _, op in FOREIGN])
def test_a_hint_never_names_an_op_other_than_the_one_in_the_log(line, op, kb):
    """Of the entries that cite the message the line shows (kb reads the op in it), none is shown with a hint
    ("to confirm it, check that the op named is X", "it is this one if ...") naming another op."""
    _, text, reply = kb(f"{line}\n")
    cites = _cites(line)
    assert cites
    # a text result is its block; a reply's diagnosis is the whole reply, a list of causes one line each
    parts = re.split(r"\n(?=\d+\. KB\d+ )", text) + ([reply] if "this looks like KB" in reply else reply.splitlines())
    for part in parts:
        about = re.search(r"\bKB\d+\b", part)
        if about is None or about[0] not in cites:
            continue
        for named in NAMED.findall(part):
            assert named.rstrip(".,;").split("::")[-1].lower() == op.split("::")[-1].lower(), part


def test_a_count_the_entry_does_not_have_rules_it_out(kb):
    rows, _, _ = kb("Can't convert Einsum for input size = 2\n")
    assert "mnn-einsum-three-operands" not in [r["entry"] for r in rows]
    rows, _, _ = kb("Can't convert Einsum for input size = 3\n")
    assert rows[0]["entry"] == "mnn-einsum-three-operands"


def test_the_text_says_what_it_ruled_out_and_why(kb):
    _, text, _ = kb("These Op Not Support: ONNX::SpecAug\n")
    assert re.search(r"[Rr]uled out.*KB025 [^\n]*SpecAug", text, re.S), text


def test_a_pattern_that_names_the_values_it_accepts_decides_alone(kb):
    """KB022's pattern accepts `layer pnnx.Expression` (what old pnnx releases leave); its evidence proves the
    Reduce* case only, so it must not rule the entry out on a pnnx.Expression line."""
    rows, _, _ = kb("layer pnnx.Expression not exists or registered\n")
    assert "pnnx-opset18-reduce-axes" in [r["entry"] for r in rows]
    rows, _, _ = kb("layer Softmax2 not exists or registered\n")  # a value its pattern does not accept
    assert "pnnx-opset18-reduce-axes" not in [r["entry"] for r in rows]
