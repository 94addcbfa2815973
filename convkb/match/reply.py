"""`kb explain --format markdown`: the reply a support engineer pastes into the user's issue.

About ten lines for one match: the diagnosis quoting the user's own line, the status on their
version (read from the log, or --engine, else the newest measured), the verified workaround, and
anchored links. A generic line gets its message page and the question that tells its causes apart.
"""

from __future__ import annotations

import re

from convkb.checks import load_checks
from convkb.match.links import message_url, page_url
from convkb.match.status import Statuses, Wanted
from convkb.engines import ENGINES
from convkb.status import verified_workaround

# "MNN 3.6.1", "mnn==3.6.1", "ncnn version: 1.0.20261020", "pnnx 20261020"
_VERSION = re.compile(r"\b(mnn|ncnn|pnnx|onnxruntime)\b[\s=:v,-]*(?:version[\s:=]*)?(\d+\.\d+(?:\.\d+)+|\d{8})",
                      re.IGNORECASE)


def versions_in(text: str) -> list[Wanted]:
    """The engine versions a log names."""
    found = {}
    for m in _VERSION.finditer(text):
        found.setdefault(m[1].lower(), m[2])
    return [Wanted(e, v) for e, v in found.items()]


def reply(ranked, text: str, wanted: list[Wanted], seen=(), told=()) -> str:
    """`seen`: the indexed messages the report shows. One that no result cites leads a reply whose results came
    from the report's words only: the user's own line says more than their words. `told`: a message the words
    alone describe best (no line of the report is known): it leads such a reply too, as a guess."""
    cited = {h.rule.sig.message for r in ranked for h in r.hits}
    lines_spoke = any(r.hits or r.evidence for r in ranked)
    uncited = [m for m in seen if m.id not in cited]
    if uncited and not lines_spoke:
        return _message(uncited[0], text, ranked)
    if told and not lines_spoke:
        return _message(told[0], text, ranked, from_words=True)
    if not ranked:
        return "No known problem in the knowledge base matches this report."
    x = ranked[0]
    e = x.entry
    asked = wanted or versions_in(text)
    if x.confidence != "match" and x.message is not None and x.message.generic:
        return _generic(ranked, x)
    line = _users_line(x)
    out = [f"**Diagnosis:** this looks like {e.meta.id}, *{e.meta.title}*."]
    if line:
        out.append(f"Your log shows it: {_code(line)}")
    if x.confidence != "match":
        out.append("(Only a likely match: the report does not show what sets this cause apart"
                   + (f"; to confirm, check that {x.entry.meta.signatures[0].evidence_summary})"
                      if x.entry.meta.signatures[0].evidence_summary else ")"))
    statuses = Statuses().of(e, [w for w in asked if w.engine in e.meta.engines] or [])
    out.append("")
    out.append("**Status:** " + "; ".join(_status(s) for s in statuses))
    fix = _workaround(e, statuses)
    if fix:
        out.append("")
        out.append(f"**Verified workaround:** {fix}")
    out += ["", f"Details: {page_url(e.slug)}#workaround · the signature: {page_url(e.slug)}#sig-{_sig(x)}"]
    return "\n".join(out)


def _users_line(x) -> str:
    if x.evidence:
        return min(x.evidence, key=lambda v: v.number).line.strip()[:200]
    return x.hits[0].line.strip()[:200] if x.hits else ""


def _code(line: str) -> str:
    """A Markdown code span that survives backticks in the user's line (GitHub renders the reply)."""
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", line)), default=0) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{ticks}{pad}{line}{pad}{ticks}"


def _sig(x) -> str:
    if x.evidence:
        return x.evidence[0].sig.id
    return x.hits[0].rule.sig.id if x.hits else x.entry.meta.signatures[0].id


def _status(s) -> str:
    return f"{ENGINES[s.engine].shown} {s.version or ''}".strip() + f": {s.state.answer}"


def _workaround(entry, statuses) -> str | None:
    """The first workaround whose checks work on the release asked about (or the newest measured)."""
    verdicts = {n: v for s in statuses for n, v in s.checks.items()}
    checks = list(load_checks(entry).items.values())
    w = verified_workaround(entry.meta.workarounds, checks, verdicts)
    if w is None:
        return None
    mine = [c.name for c in checks if c.workaround == w.id and c.name in verdicts]
    return f"{w.summary} (verified by the check{'s' if len(mine) > 1 else ''} `{'`, `'.join(mine)}`)"


def _generic(ranked, x) -> str:
    m = x.message
    line = _users_line(x)
    causes = [r for r in ranked if r.message is not None and r.message.id == m.id][:3]
    out = [f"**Diagnosis:** {_code(line)} is a message that several causes print, so it alone does not say which.",
           f"Its known causes and how to tell them apart: {message_url(m.id)}", "",
           "The causes this knowledge base has measured:"]
    for r in causes:
        tell = next((s.evidence_summary for s in r.entry.meta.signatures if s.evidence_summary), "")
        out.append(f"- {r.entry.meta.id} *{r.entry.meta.title}*: {page_url(r.entry.slug)}#sig-{_sig(r)}"
                   + (f" (it is this one if {tell})" if tell else ""))
    out += ["", "Could you post the whole converter log and the ops around the failing node?"]
    return "\n".join(out)


def _message(m, text: str, ranked, from_words: bool = False) -> str:
    """A line the message index knows, whose causes no entry of this knowledge base measured; or, `from_words`,
    the message a report without the line describes."""
    rx = re.compile(m.pattern, re.IGNORECASE)
    line = next((ln.strip()[:200] for ln in text.splitlines() if rx.search(ln)), m.example)
    causes = len(m.causes)
    first = (f"**Diagnosis:** your description sounds like the message {_code(m.shown)} (a guess from your words: "
             f"please post the exact line)" if from_words else
             f"**Diagnosis:** {_code(line)} is a known {'message that several causes print' if m.generic else 'message'}"
             f"; no problem measured in this knowledge base explains it yet.")
    out = [first,
           f"Its {causes} known upstream cause{'s' * (causes != 1)} (reported, not measured here) and how to tell them"
           f" apart: {message_url(m.id)}"]
    if ranked:
        out += ["", "The report's words also resemble (a guess from words alone):"]
        out += [f"- {r.entry.meta.id} *{r.entry.meta.title}*: {page_url(r.entry.slug)}" for r in ranked[:2]]
    out += ["", "Could you post the whole log, your engine version and the ops around the failing node?"]
    return "\n".join(out)
