"""The message pages, /messages/<id>/: one per engine message of the index (repros/_messages/).

A page gives the message and its pattern, which engines and versions printed it in this corpus's
checks (the cells whose signature cites the message), and every known cause: the entries that print
it, with the evidence that tells each apart, and the upstream causes by reference.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from markupsafe import Markup, escape

from kb.entries import Entry
from kb.messages import cited_by
from kb.schema import Message, Signature
from kb.site.markup import code_span, env
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


def message_page(msg: Message, entries: list[Entry], statuses: dict[str, EntryStatus]) -> str:
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
                                              ncauses=len(by_entry) + len(msg.causes))


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
