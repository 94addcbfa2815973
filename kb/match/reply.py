"""`kb explain --format markdown`: the reply a support engineer pastes into the user's issue.

About ten lines for one match: the diagnosis quoting the user's own line, the status on their
version (read from the log, or --engine, else the newest measured), the verified workaround, and
anchored links. A generic line gets its message page and the question that tells its causes apart.
"""

from __future__ import annotations

import re

from kb.match.links import LOCATE, message_url, page_url, search_url
from kb.match.status import Statuses, Wanted
from kb.engines import ENGINES
from kb.verdicts import Status as State
from kb.versions import version_key

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
        return ("No known problem in the knowledge base matches this report.\n\n**What to do:** find the node that "
                f"fails with `{LOCATE}`: it names the first node whose output leaves onnxruntime's, or the "
                "smallest part of the graph that still fails, and says whether a known problem describes it. Then post "
                "that, the whole converter log (the first error line matters most) and the engine's release; "
                f"meanwhile, search the site for the error line: {search_url(_first_line(text))}")
    asked = wanted or versions_in(text)
    return "\n".join([_answer(ranked, asked)] + _also(uncited, text))


def _answer(ranked, asked) -> str:
    x = ranked[0]
    if x.confidence != "match" and x.message is not None and x.message.generic:
        return _generic(ranked, x, asked)
    if x.confidence != "match":
        return _candidates(ranked, asked)
    e = x.entry
    line = _users_line(x)
    out = [f"**Diagnosis:** this is {e.meta.id}, *{e.meta.title}*."]
    if line:
        out.append(f"Your log shows it: {_code(line)}")
    statuses = _statuses(e, asked)
    out += ["", "**Status:** " + "; ".join(_status(s) for s in statuses), ""]
    out += _what_to_do(e, statuses)
    out += ["", f"Details: {page_url(e.slug)}#workaround · the signature: {page_url(e.slug)}#sig-{_sig(x)}"]
    return "\n".join(out)


def _statuses(entry, asked: list[Wanted]):
    """The entry's status on the releases asked about that concern it (`--engine` narrows, never empties),
    else on the newest release of each of its engines."""
    return Statuses().of(entry, [w for w in asked if w.engine in entry.meta.engines])


def _what_to_do(entry, statuses) -> list[str]:
    """What the user can do on the releases they use: the workaround verified there, an upgrade that
    fixes it, else what upstream knows."""
    out = ["**What to do:**"]
    fixes = list({(s.workaround.workaround.id, s.workaround.engine, s.workaround.version): s.workaround
                  for s in statuses if s.workaround}.values())
    for w in fixes:
        out.append(f"- Verified workaround ({_where(w)}): {w.workaround.sentence}")
        if w.workaround.scope:
            out.append(f"  It applies {w.workaround.scope}.")
        if w.spread:
            out.append(f"  It depends on the model: {w.spread}.")
        out += [f"  Limit: {note}." for _, note, _ in w.limits]
        if w.workaround.how:
            out += ["", "  ```", *(f"  {ln}" for ln in w.workaround.how.rstrip().splitlines()), "  ```"]
        out.append(f"  Verified by the check{'s' * (len(w.works) > 1)} `{'`, `'.join(w.works)}`.")
    for s in statuses:
        later = s.fixed_in and s.state in (State.REPRODUCES, State.DIFFERS, State.NOT_CHECKED) \
            and (s.version is None or version_key(s.fixed_in) > version_key(s.version))
        if later:
            out.append(f"- Upgrade {ENGINES[s.engine].shown} to {s.fixed_in} or newer: every release measured from "
                       f"{s.fixed_in} on is fixed.")
    if len(out) == 1:
        where = ", ".join(f"{ENGINES[s.engine].shown} {s.version or ''}".strip() for s in statuses) or "any release"
        out.append(f"- No workaround is verified for {where}.")
        out += [f"- Upstream: {u.ref} ({u.url}){': ' + u.note if u.note else ''}" for u in entry.meta.upstream[:2]]
        if entry.meta.guard and entry.meta.guard.fixed_in:
            out.append(f"- Upstream says it was fixed in {entry.meta.guard.fixed_in}.")
    return out


def _where(w) -> str:
    """The release a workaround was verified on, and whether it is the user's own."""
    where = f"{ENGINES[w.engine].shown} {w.version}"
    return where + (f", the nearest measured release to your {w.unmeasured}" if w.unmeasured else "")


def _if_it_is(entry, asked) -> list[str]:
    w = next((s.workaround for s in _statuses(entry, asked) if s.workaround), None)
    return [f"   If it is: {w.workaround.summary} (verified on {_where(w)})"] if w else []


def _confirm(r) -> str:
    """What would tell that it is this candidate: the evidence of a signature the log shows, else of any of
    its signatures, else what its first signature looks like."""
    shown = [h.rule.sig.evidence_summary for h in r.hits if h.rule.sig.evidence_summary]
    tell = (shown or r.confirm or [""])[0]
    if tell:
        return tell
    first = re.split(r"(?<=[.;:])\s", r.entry.meta.signatures[0].summary.strip())[0].rstrip(".;:")
    return f"your output shows this: {first[0].lower()}{first[1:]}"


def _candidates(ranked, asked) -> str:
    """No line specific to one entry: the candidates, why each was picked, what would confirm it; no verdict."""
    shown = ranked[:3]
    out = ["**Not a diagnosis yet:** nothing in the report is specific to one known problem. "
           f"The closest {'candidates' if len(shown) > 1 else 'candidate'}:"]
    for i, r in enumerate(shown, 1):
        e = r.entry
        out.append(f"{i}. {e.meta.id} *{e.meta.title}*: {page_url(e.slug)}")
        out.append(f"   Picked because {_why(r)}.")
        out.append(f"   It is this one if {_confirm(r)}.")
        out += _if_it_is(e, asked)
    out += ["", "**What to do:** post the whole converter log (the exact error line), your engine and its release, "
                "and the ops around the failing node, and we can tell which it is."]
    return "\n".join(out)


def _why(r) -> str:
    if r.evidence or r.hits:
        line = _users_line(r)
        return f"your log shows {_code(line)}" + (", a message several causes print" if not r.evidence else "")
    return "the report's words " + ", ".join(f'"{w}"' for w in r.words[:5]) + " (words only)"


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
    where = f"{ENGINES[s.engine].shown} {s.version or ''}".strip()
    if not s.near:
        return f"{where}: {s.state.answer}"
    sides = []
    for n in s.near:
        side = "older" if version_key(n.version) < version_key(s.version) else "newer"
        sides.append(f"{n.version} ({side}): {n.state.answer}")
    return f"{where}: not measured on this release; the nearest measured: {', '.join(sides)}"


def _generic(ranked, x, asked) -> str:
    m = x.message
    line = _users_line(x)
    causes = [r for r in ranked if r.message is not None and r.message.id == m.id][:3]
    out = [f"**Not a diagnosis yet:** {_code(line)} is a message that several causes print, so it alone does not say "
           "which.",
           f"Its known causes and how to tell them apart: {message_url(m.id)}", "",
           "The causes this knowledge base has measured:"]
    for r in causes:
        out.append(f"- {r.entry.meta.id} *{r.entry.meta.title}*: {page_url(r.entry.slug)}#sig-{_sig(r)}"
                   + f" (it is this one if {_confirm(r)})")
        out += [ln[1:] for ln in _if_it_is(r.entry, asked)]
    out += ["", "Could you post the whole converter log and the ops around the failing node?"]
    return "\n".join(out)


def _also(uncited, text: str) -> list[str]:
    """Each known message the log shows that no result cites (as the text output's "The log also shows")."""
    out = []
    for m in uncited:
        kind = "a message that several causes print" if m.generic else "a known message"
        out += ["", f"Your log also shows {_code(_users(m, text))}, {kind}: {message_url(m.id)}"]
    return out


def _users(m, text: str) -> str:
    """The user's own line for message `m` (else the catalogue's example)."""
    rx = re.compile(m.pattern, re.IGNORECASE)
    return next((ln.strip()[:200] for ln in text.splitlines() if rx.search(ln)), m.example)


def _message(m, text: str, ranked, from_words: bool = False) -> str:
    """A line the message index knows, whose causes no entry of this knowledge base measured; or, `from_words`,
    the message a report without the line describes."""
    line = _users(m, text)
    first = (f"**Not a diagnosis yet:** your description sounds like the message {_code(m.shown)} (a guess from your words: "
             f"please post the exact line)" if from_words else
             f"**Known message:** {_code(line)} is a known {'message that several causes print' if m.generic else 'message'}"
             f"; no problem measured in this knowledge base explains it yet.")
    out = [first,
           (f"Its {m.upstream} (reported, not measured here)" if m.upstream else "Its causes") +
           f" and how to tell them apart: {message_url(m.id)}"]
    if ranked:
        out += ["", "The report's words also resemble (a guess from words alone):"]
        out += [f"- {r.entry.meta.id} *{r.entry.meta.title}*: {page_url(r.entry.slug)}" for r in ranked[:2]]
    out += ["", "Could you post the whole log, your engine version and the ops around the failing node?"]
    return "\n".join(out)


def _first_line(text: str) -> str:
    """The report's first error-like line (else its first line), as a search query."""
    from kb.logs import ERRORISH
    from kb.match import noise

    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = next((ln for ln in lines if ERRORISH.search(ln)), lines[0] if lines else "")
    return " ".join((noise.query(line) or line).split()[:12])
