"""`kb explain`'s command: reading the log (with progress on a terminal), and the text, JSON and Markdown
output of explain()'s ranking."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys

from kb import messages as message_index
from kb.entries import Entry, load_all
from kb.match import codes, noise
from kb.match.explain import MATCH, POSSIBLE, Explained, explain
from kb.match.links import LOCATE, message_url, page_url, search_url
from kb.match.logfile import open_log
from kb.match.rules import Hit
from kb.schema import Message

SHOWN = 300  # characters of a matched line shown
CAUSES_SHOWN = 4  # upstream causes of a generic message listed in the text output
FIGURES_SHOWN = 6  # ops' node-test figures (a log may name a dozen ops: the reply stays short)
PROGRESS_FROM = 2**20  # bytes of a log from which reading it shows progress


@contextlib.contextmanager
def progress(stream):
    """The stream, counted on a progress bar on stderr while it is read: only where stderr is a terminal, for a
    file large enough to take a while (a pipe has no size to count against)."""
    try:
        size = os.fstat(stream.fileno()).st_size if stat.S_ISREG(os.fstat(stream.fileno()).st_mode) else 0
    except (OSError, AttributeError, ValueError):
        size = 0
    if size < PROGRESS_FROM or not sys.stderr.isatty():
        yield stream
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("reading the log"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True, redirect_stdout=False, redirect_stderr=False) as bar:
        task = bar.add_task("read", total=size)

        class Counted:
            def read(self, n: int = -1) -> bytes:
                data = stream.read(n)
                bar.advance(task, len(data))
                return data

        yield Counted()


def explain_command(log: str | None, as_json: bool, markdown: bool = False, engines: list[str] = ()) -> int:
    """Print the entries whose signatures the log shows, matches first; return 1 if any is reported
    (`match` or `possible`), 0 if none (KBError on bad input). `markdown`: the reply to paste instead."""
    wanted = []
    if engines:  # kb.match.status reads records (pydantic models): only when asked
        from kb.match.status import parse_engines

        wanted = parse_engines(list(engines))
    entries = load_all()
    messages = message_index.load_all(entries=entries)
    name, stream = open_log(log)
    seen: list[Message] = []
    lines: list[str] = []
    told: list[Message] = []
    ruled: list[Explained] = []
    try:
        with progress(stream) as reading:
            ranked, query = explain(name, reading, entries, messages, seen, lines, told, ruled)
    finally:
        if log not in (None, "-"):
            stream.close()
    if markdown:
        from kb.match.reply import reply

        print(reply(ranked, "\n".join(lines), wanted, seen, told) + _figures_md(seen, lines, wanted))
        return codes.FOUND if ranked else codes.NOTHING_FOUND
    if as_json:
        print(json.dumps([json_row(x) for x in ranked], indent=1))
    elif ranked:
        print(_as_text(name, ranked, seen, entries) + "".join(f"\n\n{_told(m)}" for m in told)
              + "".join(f"\n{line}" for line in _ruled(ruled) + _figures(seen, lines, wanted)))
    if not ranked:
        hint = (f"{name}: no known problem matches this log. Search the site: {search_url(_query(query))}\n"
                f"Find the node that fails: {LOCATE}")
        for m in seen:
            hint += f"\nIt shows {'a generic' * m.generic or 'a'} message with known causes: {message_url(m.id)}"
        hint += "".join(f"\n{_told(m)}" for m in told) + "".join(f"\n{line}" for line in _ruled(ruled)
                                                                   + _figures(seen, lines, wanted))
        print(hint, file=sys.stderr if as_json else sys.stdout)
    return codes.FOUND if ranked else codes.NOTHING_FOUND


def _op_figures(seen: list[Message], lines: list[str], wanted) -> list[tuple[str, str]]:
    """(figure, op page) of each op a line of the log says its engine lacks (kb.opfigures): on the release
    --engine, else the log, names for the path, else the newest measured."""
    from kb.match.opcases import op_url
    from kb.match.reply import versions_in
    from kb.opfigures import of_messages
    from kb.paths import repo_root

    if not any(m.unsupported_op for m in seen):
        return []  # no ledger read for a log that names no op
    versions = {w.engine: w.version for w in wanted or versions_in("\n".join(lines)) if w.version}
    return [(f.text(), op_url(f.op)) for f in of_messages(seen, lines, repo_root(), versions)][:FIGURES_SHOWN]


def _figures(seen: list[Message], lines: list[str], wanted) -> list[str]:
    """Below the entries and message pages: the ops' figures in kb conform's one-op cases (onnx's node tests,
    torch's op samples on pnnx), if any."""
    found = _op_figures(seen, lines, wanted)
    if not found:
        return []
    ops = "ops it names" if len({url for _, url in found}) > 1 else "op it names"
    return ["", f"One-op tests of the {ops}, on that engine (kb conform):",
            *(f"   {text}; see {url}" for text, url in found)]


def _figures_md(seen: list[Message], lines: list[str], wanted) -> str:
    """The same, for the reply to paste: after it, never in place of its diagnosis or message page."""
    found = _op_figures(seen, lines, wanted)
    if not found:
        return ""
    ops = "ops" if len({url for _, url in found}) > 1 else "op"
    return f"\n\n**One-op tests of the {ops} your log names** (kb conform):\n" + "\n".join(
        f"- {text}; see {url}" for text, url in found)


def _ruled(ruled: list[Explained]) -> list[str]:
    """The entries the log itself rules out, and why: they print its message too, but not with what it names."""
    if not ruled:
        return []
    out = ["", "Ruled out by the log itself (their message, but not with what the log names):"]
    return out + [f"   {x.entry.meta.id}  {x.entry.meta.title}: {x.refuted}" for x in ruled]


def _told(m: Message) -> str:
    """A message the report's words describe (no line of it in the report): its page lists the causes."""
    return (f"The report's words describe the message \"{m.shown}\" best (a guess from words; no line of it "
            f"is in the report): its causes and what tells them apart: {message_url(m.id)}")


def _shown(h: Hit) -> str:
    return _cut(h.line, h.rule.rx)


def _cut(line: str, rx: re.Pattern | None = None) -> str:
    if len(line) <= SHOWN:
        return line
    m = rx.search(line) if rx else None
    start = max(0, min(m.start() - SHOWN // 3, len(line) - SHOWN)) if m else 0
    return ("..." if start else "") + line[start:start + SHOWN] + "..."


def _best(x: Explained) -> tuple[str, int, str]:
    """The line that best shows the result: for a match, what proves it; else the best hit.
    (line, line number, signature id)"""
    if x.confidence == MATCH and x.evidence:
        ev = min(x.evidence, key=lambda v: v.number)
        return _cut(ev.line), ev.number, ev.sig.id
    h = next((h for h in x.hits if x.specific(h)), x.hits[0]) if x.hits else None
    if h is None:  # found by the report's words alone
        return f"described in words: {', '.join(x.words)}", 0, None
    return _shown(h), h.number, h.rule.sig.id


def json_row(x: Explained) -> dict:
    line, number, sig = _best(x)
    msg = x.message
    return {
        "entry": x.entry.slug,
        "confidence": x.confidence,
        "line": line,
        "url": page_url(x.entry.slug),
        "message": message_url(msg.id) if msg else None,
        "id": x.entry.meta.id,
        "title": x.entry.meta.title,
        "score": round(x.score, 2),
        "line_number": number,
        "signature": sig,
        "signatures": [{"id": h.rule.sig.id, "kind": h.rule.sig.kind, "line": _shown(h), "line_number": h.number,
                        "count": h.count, "weak": h.rule.weak, "generic": not h.rule.weak and not x.specific(h),
                        "message": message_url(h.rule.sig.message) if h.rule.sig.message in x.messages else None}
                       for h in x.hits],
        "evidence": [{"signature": v.sig.id, "line": _cut(v.line), "line_number": v.number} for v in x.evidence],
        "words": x.words,
    }


def _as_text(name: str, ranked: list[Explained], seen: list[Message] | None = None,
             entries: list[Entry] | None = None) -> str:
    matches = [x for x in ranked if x.confidence == MATCH]
    n, p = len(matches), len(ranked) - len(matches)
    head = []
    if n:
        head.append(f"{n} known problem{'s' * (n > 1)} match{'es' * (n == 1)} this log")
    if p:
        what = "more" if n else f"known problem{'s' * (p > 1)}"
        lines = [bool(x.hits or x.evidence) for x in ranked if x.confidence != MATCH]
        why = "generic messages only" if all(lines) else "words only" if not any(lines) else "generic messages or words only"
        head.append(f"{p} {what} {'is' if p == 1 else 'are'} possible ({why})")
    out = [f"{name}: {' and '.join(head)}{', best first' * (len(ranked) > 1)}"]
    for rank, x in enumerate(ranked, 1):
        out += ["", f"{rank}. {x.entry.meta.id}  {x.entry.meta.title}  [{x.confidence}]"]
        for v in sorted(x.evidence, key=lambda v: v.number):
            out.append(f"   line {v.number} [evidence for {v.sig.id}]: {_cut(v.line)}")
        quoted = {v.number for v in x.evidence}
        for h in x.hits:
            if h.number in quoted:  # the line is already quoted as evidence: once is enough
                continue
            quoted.add(h.number)
            note = ", a symptom with many causes" if h.rule.weak else ", a generic message" * (not x.specific(h))
            times = f", {h.count} times" if h.count > 1 else ""
            out.append(f"   line {h.number} [{h.rule.sig.id}{note}{times}]: {_shown(h)}")
        if not x.hits and not x.evidence:
            out.append(f"   described in words the entry uses: {', '.join(x.words)}")
        if x.confidence == POSSIBLE:
            checks = x.confirm
            if checks:
                out.append(f"   to confirm it, check that {'; or '.join(checks)}")
        out.append(f"   page: {page_url(x.entry.slug)}")
    out += _ambiguous(ranked, seen or [], entries or [x.entry for x in ranked]) + _uncited(ranked, seen or [])
    return "\n".join(out)


def _ambiguous(ranked: list[Explained], seen: list[Message], entries: list[Entry]) -> list[str]:
    """For each generic message behind a `possible`: it is ambiguous, its other causes, its page."""
    shown = {h.rule.sig.message for x in ranked if x.confidence == POSSIBLE for h in x.hits}
    out = []
    for m in seen:
        if not (m.generic and m.id in shown):
            continue
        citing = sorted({e.meta.id for e, _ in message_index.cited_by(m.id, entries)})
        total = len(citing) + len(m.causes)
        # the user's own line, not the catalogue's example
        line = next((_shown(h) for x in ranked for h in x.hits if h.rule.sig.message == m.id), m.example)
        known = "1 known cause prints it" if total == 1 else f"{total} known causes print it"
        where = ", and ".join(([", ".join(citing) + " here"] if citing else [])
                              + ([f"{len(m.causes)} upstream"] if m.causes else []))
        alone = "others may too, so this line alone does not name it" if total == 1 else \
            "so this line alone names none of them"
        out += ["", f"The line \"{line}\" is a generic message: {known} ({where}), {alone}."]
        for c in m.causes[:CAUSES_SHOWN]:
            out.append(f"   {c.ref}: {c.cause}")
        if len(m.causes) > CAUSES_SHOWN:
            out.append(f"   and {len(m.causes) - CAUSES_SHOWN} more")
        out.append(f"   what tells them apart: {message_url(m.id)}")
    return out


def _uncited(ranked: list[Explained], seen: list[Message]) -> list[str]:
    """Each indexed message the log shows that no result cites (the results came from other lines or from
    words): its page still lists its known causes."""
    cited = {h.rule.sig.message for x in ranked for h in x.hits}
    return [line for m in seen if m.id not in cited
            for line in ("", f"The log also shows \"{m.shown}\", a {'generic ' * m.generic}message"
                             f"{f' with {m.upstream}' if m.upstream else ', its causes and what tells them apart'}: "
                             f"{message_url(m.id)}")]


def _query(line: str | None) -> str:
    """A search query from an error line: its words without the noise (kb.match.noise: timestamps, folders,
    file names, addresses), as the site's search box strips it too."""
    words = noise.query(line or "").split() or (line or "").split()
    return " ".join(words[:12])
