"""The message pages, /messages/<id>/: one per engine message of the index (repros/_messages/).

A page gives the message and its pattern, which engines and versions printed it in this corpus's
checks (the cells whose signature cites the message), and every known cause: the entries that print
it, with the evidence that tells each apart, and the upstream causes by reference. A message that an engine lacks
an op (`unsupported_op`) also gives each op it names its figure in onnx's own node tests there (kb.opfigures).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from markupsafe import Markup, escape

from kb import opfigures
from kb.conformance import Table
from kb.entries import Entry
from kb.messages import cited_by, named_ops
from kb.schema import Message, Signature
from kb.site.markup import code_span, env
from kb.site.ops import PATH_LABEL
from kb.status import EntryStatus, public_status
from kb.versions import version_key

FOLDER = "messages"  # pages are written to <generated>/messages/<id>.md and served at /messages/<id>/
TEMPLATE = "message.md.j2"


@dataclass(frozen=True)
class Citing:
    entry: Entry
    sig: Signature
    seen: list[tuple[str, list[str]]]  # (engine, versions oldest first) where a check saw this signature


def page_name(message_id: str) -> str:
    return f"{FOLDER}/{message_id}.md"


def printed_by(entry: Entry, sig: Signature, st: EntryStatus | None) -> list[tuple[str, list[str]]]:
    """Engines and versions whose checks recorded (or accepted) the signature: kb.status cells' `signature`."""
    seen: dict[str, set[str]] = {}
    for cs in st.checks() if st else []:
        for v, cell in cs.cells.items():
            if cell.signature == sig.id:
                seen.setdefault(cs.check.engine, set()).add(v)
    return [(en, sorted(vs, key=version_key)) for en, vs in sorted(seen.items())]


def tell_apart(entry: Entry, sigs: list[Signature]) -> str:
    """How a reader tells this cause apart, in words (never a regex): what its citing signatures say to
    look for, else what its other signatures say, else what the model must contain (its trigger)."""
    own = [s.evidence_summary for s in sigs if s.evidence_summary]
    other = [s.evidence_summary for s in entry.meta.signatures if s.evidence_summary and s not in sigs]
    words = own or other[:1]
    if words:
        return "; or ".join(dict.fromkeys(words))
    if entry.meta.trigger:
        return "nothing in the log itself; your model has " + " or ".join(p.summary for p in entry.meta.trigger)
    return "nothing in a log tells it apart yet"


def _rank(entry: Entry, st: EntryStatus | None, seen: int) -> tuple:
    """Still affected on its newest measured release first, then the most releases seen printing it here."""
    from kb.verdicts import Status

    affected = st is not None and public_status(st) in (Status.REPRODUCES, Status.DIFFERS)
    return (not affected, -seen, entry.meta.id)


_WORD = re.compile(r"\b[A-Z][A-Za-z0-9]*\b")  # an op as causes name it: "Einsum and Sign", "TopK/Greater"


def listed_ops(msg: Message, entries: list[Entry], ops: set[str]) -> list[str]:
    """For a message that an engine lacks an op (`unsupported_op`): the ops its lines name (its example, then the
    citing signatures' examples), then those its causes name, of `ops` (the ops with node tests), each once."""
    if not msg.unsupported_op:
        return []
    lines = [msg.example] + [s.example for _, s in cited_by(msg.id, entries) if s.example]
    named = [op for line in lines for op in named_ops(msg, line)]
    named += [w for c in msg.causes for w in _WORD.findall(c.cause)]
    return [op for op in dict.fromkeys(named) if op in ops]


def op_rows(msg: Message, entries: list[Entry], tables: dict[str, Table]) -> list[dict]:
    """Per op the page lists and engine path of the message's engine: the op's figure on the newest release
    measured (kb.opfigures), for the page's table."""
    ops = {op for t in tables.values() for op in t.ops.values()}
    paths = [p for en in msg.engines for p in opfigures.paths(en, tables)]
    rows = []
    for op in listed_ops(msg, entries, ops):
        for path in dict.fromkeys(paths):
            f = opfigures.figure(tables[path], op)
            if f is not None:
                rows.append({"op": op, "label": f"{PATH_LABEL.get(path, path)} {f.version}", "figure": f})
    return rows


def message_page(msg: Message, entries: list[Entry], statuses: dict[str, EntryStatus],
                 tables: dict[str, Table] | None = None) -> str:
    """`tables`: the conformance ledgers (kb.site.ops.Conformance.tables), for the ops the message names."""
    citing = [Citing(e, s, printed_by(e, s, statuses.get(e.slug))) for e, s in cited_by(msg.id, entries)]
    by_entry: dict[str, dict] = {}
    for c in citing:
        cause = by_entry.setdefault(c.entry.slug, {"entry": c.entry, "sigs": [], "seen": set()})
        cause["sigs"].append(c.sig)
        cause["seen"] |= {(en, v) for en, vs in c.seen for v in vs}
    causes = sorted(by_entry.values(), key=lambda x: _rank(x["entry"], statuses.get(x["entry"].slug), len(x["seen"])))
    for x in causes:
        x["tell"] = tell_apart(x["entry"], x["sigs"])
        st = statuses.get(x["entry"].slug)
        x["affected"] = _rank(x["entry"], st, 0)[0] is False
        x["links"] = Markup(", ").join(Markup("[{}](../{}.md#sig-{})").format(code_span(s.id), x["entry"].slug, s.id)
                                       for s in x["sigs"])
    return env.get_template(TEMPLATE).render(msg=msg, title_html=html.escape(msg.shown, quote=False),
                                              citing=citing, causes=causes,
                                              ncauses=len(by_entry) + len(msg.causes),
                                              op_rows=op_rows(msg, entries, tables or {}))


def message_link(sig: Signature, messages: dict[str, Message] | None = None) -> Markup:
    """For an entry page's signature section (served at /<slug>/): a paragraph linking the signature's
    message page, saying whether the message is generic. Empty when the signature cites no message."""
    msg = (messages or {}).get(sig.message or "")
    if not sig.message or (messages is not None and msg is None):  # no page to link to
        return Markup("")
    note = ""
    if msg is not None and msg.generic:
        note = " — a generic message: other causes print it too; the message page tells them apart"
    href = f"../{FOLDER}/{sig.message}/"
    return Markup('<p class="kb-sig-message">Engine message: <a href="{}">{}</a>{}</p>').format(
        href, sig.message, escape(note))
