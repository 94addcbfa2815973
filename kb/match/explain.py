"""`kb explain [LOG]`: the known problems whose signatures appear in a log, best first.

Signatures of kind `log` are an engine's own message and count as they are. Crash, NaN and
mismatch signatures describe symptoms many causes share, so they weigh less, and a short one
(e.g. `SIGSEGV`) counts only when the log also names one of the entry's engines. A symptom
(weak) hit counts at all only when the log names the entry's engine and shows another of its
signatures too, or the entry's evidence.

Each result has a confidence. Many engine messages are generic (`Broad cast error`, `Compute Shape
Error`, ...: repros/_messages/, `generic: true`), so seeing one names no entry:

- `match`: the log holds evidence specific to the entry: one of its signatures' `evidence` regexes
  (searched in the whole log), or a signature whose message is not generic;
- `possible`: the log shows only generic messages the entry prints; the message's page lists its
  other known causes and what tells them apart.

Matches come first. The exit code is 1 (FOUND) when anything is reported, `match` or `possible`,
and 0 when nothing is; a caller that wants an attribution reads `confidence` from --json.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kb import messages as message_index
from kb.entries import Entry
from kb.match.logfile import Kept, blocks, line_literals
from kb.match.refute import named_values, refutation
from kb.match.rules import (
    LAYER_LINE,
    Evidence,
    Hit,
    Rule,
    evidence,
    matches,
    native_ncnn_layer,
    op_claims,
    rules,
    search,
)
from kb.schema import Message

EVIDENCE = 3.0  # score of a piece of evidence: more than any one message
MATCH, POSSIBLE = "match", "possible"
# Prose (kb.match.words): a report's words rank entries when no line names one. Tuned on the tune half
# of tests/data/real_logs only.
PROSE_RELATIVE = 0.5  # an entry found by words alone scores at least this fraction of the best one
PROSE_SHARED = 2  # and shares at least this many of the report's words
PROSE_SHOWN = 3  # at most this many entries from words alone
PROSE_WEIGHT = 0.05  # words order results that lines found, never outweigh a line


@dataclass
class Explained:
    entry: Entry
    hits: list[Hit]  # of one entry, one per signature, best first
    evidence: list[Evidence]
    messages: dict[str, Message]  # the message index, to tell generic messages from specific ones
    words: list[str] = field(default_factory=list)  # the report's words the entry shares (kb.match.words)
    prose: float = 0.0  # their BM25 score
    # Why the log itself rules the entry out ("" if it does not): a message it shows names an op, a layer, a
    # count... that the entry's evidence cannot have there. Such an entry is not in explain()'s ranking.
    refuted: str = ""

    @property
    def confirm(self) -> list[str]:
        """What would make this `possible` a match: its signatures' evidence summaries, in their order. Never
        one the log refutes: a refuted entry is not ranked at all."""
        return list(dict.fromkeys(s.evidence_summary for s in self.entry.meta.signatures if s.evidence_summary))

    @property
    def fatal(self) -> bool:
        """Its evidence explains the crash the log shows: a crash signature of its own both matched and evidenced.
        The crash is what stopped the user, so this ranks above earlier lines the run went on after (KB125)."""
        crashed = {h.rule.sig.id for h in self.hits if h.rule.sig.kind == "crash"}
        return any(ev.sig.id in crashed for ev in self.evidence)

    @property
    def score(self) -> float:
        return sum(h.score for h in self.hits) + EVIDENCE * len(self.evidence) + PROSE_WEIGHT * self.prose

    def specific(self, h: Hit) -> bool:
        """An engine message that names this entry by itself: not a symptom, not a generic message."""
        if h.rule.weak:
            return False
        named = LAYER_LINE.search(h.line)
        if named and native_ncnn_layer(named[1]):
            return False  # ncnn has a layer of that name: a build without it prints this too, for any converter
        if not h.rule.sig.message:
            return True  # an entry's own message, not in the index
        m = self.messages.get(h.rule.sig.message)
        return m is not None and not m.generic  # a message missing from the index counts as generic

    @property
    def confidence(self) -> str:
        return MATCH if self.evidence or any(self.specific(h) for h in self.hits) else POSSIBLE

    @property
    def message(self) -> Message | None:
        """The message of the best hit that cites one."""
        return next((self.messages[h.rule.sig.message] for h in self.hits if h.rule.sig.message in self.messages),
                    None)


def explain(name: str, stream, entries: list[Entry], messages: dict[str, Message] | None = None,
            seen: list[Message] | None = None, read: list[str] | None = None,
            described: list[Message] | None = None,
            ruled_out: list[Explained] | None = None) -> tuple[list[Explained], str | None]:
    """The entries matched, best first (matches before possibles), and the line to search the site
    for: the log's first error-like line, else its last line. `seen`, if given, receives the indexed
    messages the log shows; `read`, the log's lines as read; `described`, the message page a report
    without any known line describes in words best, where its words rank it above every entry;
    `ruled_out`, the entries whose lines the log shows but which it refutes (`Explained.refuted` says why),
    left out of the ranking."""
    from kb.logs import ERRORISH

    messages = message_index.load_all() if messages is None else messages
    errorish = re.compile(ERRORISH.pattern)  # searched in lowercased text: much faster than IGNORECASE
    table = rules(entries)
    hits: dict[int, Hit] = {}  # id(rule) -> its first line
    named: set[str] = set()  # engines the log mentions
    engines = {en for e in entries for en in e.meta.engines}
    first_error = last = None
    # The log's lines that evidence spanning lines, message pages and prose need: all of a log of ordinary size,
    # the lines that may matter of a large one (bounded: logfile.Kept).
    kept = Kept(lambda: _needed(table, messages, entries))
    for first, block in blocks(name, stream):
        text = "\n".join(block)
        low = text.lower()
        named.update(en for en in engines if en in low)
        last = next((ln for ln in reversed(block) if ln), last)
        if first_error is None and not hits and (m := errorish.search(low)):  # only needed if nothing matches
            first_error = block[text.count("\n", 0, m.start())]
        found_here = matches(table, text, block, low)
        for i, matched in found_here.items():
            shared = len({r.entry.slug for r in matched})
            for r in matched:
                if id(r) in hits:
                    hits[id(r)].count += 1
                else:
                    hits[id(r)] = Hit(r, first + i, block[i], shared)
        kept.add(block, low, found_here)
    lines = kept.finish()
    whole = "\n".join(lines)
    if read is not None:
        read += lines
    low = whole.lower()  # messages compare case-insensitively, as the rules do ("segmentation fault")
    shown = [m for m in messages.values() if search(m.pattern, whole, low)]
    if named & {en for m in shown for en in m.engines}:  # the shell's "Floating point exception": MNN's and ncnn's
        shown = [m for m in shown if named & set(m.engines)]  # pages both match; a log naming its engine gets its own
    if seen is not None:
        seen += shown
    named.update(en for m in shown if len(m.engines) == 1 for en in m.engines)  # an engine's own message names it
    found: dict[str, dict[str, Hit]] = {}  # entry -> signature -> its best hit
    for h in hits.values():
        if h.rule.needs_engine and not named & set(h.rule.entry.meta.engines):
            continue
        per = found.setdefault(h.rule.entry.slug, {})
        if h.rule.sig.id not in per or h.order() < per[h.rule.sig.id].order():
            per[h.rule.sig.id] = h
    explained = []
    claims = op_claims(entries)
    values = named_values(shown, whole)
    refuted: dict[str, Explained] = {}
    for e in entries:
        per = found.get(e.slug, {})
        proof = evidence(e, whole, claims)
        why = "" if proof else refutation(e, values, messages)
        if why:
            refuted[e.slug] = Explained(e, sorted(per.values(), key=Hit.order), [], messages, refuted=why)
            continue
        # A symptom alone is no result: it counts with the entry's engine named and another of its signatures.
        engine_named = bool(named & set(e.meta.engines))
        kept = [h for h in per.values() if not h.rule.weak or proof or (engine_named and len(per) > 1)]
        if kept or proof:
            explained.append(Explained(e, sorted(kept, key=Hit.order), proof, messages))
    told = _described(explained, whole, entries, named, messages, lines_spoke=bool(hits), known_line=bool(shown),
                      refuted=set(refuted))
    if described is not None:
        described += told
    if ruled_out is not None:
        ruled_out += sorted((x for x in refuted.values() if x.hits), key=lambda x: x.entry.meta.id)  # lines it shows
    ranked = sorted(explained, key=lambda x: (x.confidence != MATCH, not x.fatal, -x.score, -len(x.hits),
                                              x.entry.meta.id))
    return ranked, first_error or last


def _needed(table: list[Rule], messages: dict[str, Message], entries: list[Entry]) -> dict[str, int]:
    """The texts whose lines a large log keeps (logfile.Kept), each with the lines around it to keep: those of
    every pattern matched over the whole log (message pages, evidence), with lines around where a pattern spans
    line ends. {"": 0} (every line) if a pattern names no text. The rules' own lines are kept as they match."""
    patterns = [m.pattern for m in messages.values()]
    patterns += [rx for e in entries for s in e.meta.signatures for rx in s.evidence]
    out: dict[str, int] = {}
    for p in dict.fromkeys(patterns):
        found = line_literals(p)
        if found is None:
            return {"": 0}
        for lit, reach in found.items():
            out[lit] = max(out.get(lit, 0), reach)
    return out


_INDEXES: dict[tuple[str, ...], object] = {}


def _index(entries: list[Entry], messages: dict[str, Message]):
    """One BM25 index per corpus (by its entries' slugs and titles), built on first use."""
    from kb.match.words import Index

    key = tuple(f"{e.slug}:{e.meta.title}" for e in entries) + tuple(messages)
    if key not in _INDEXES:
        _INDEXES[key] = Index.load(entries, messages.values())
    return _INDEXES[key]


def _described(explained: list[Explained], whole: str, entries: list[Entry], named: set[str],
               messages: dict[str, Message], lines_spoke: bool, known_line: bool = False,
               refuted: set[str] = frozenset()) -> list[Message]:
    """The report's words: they order what its lines found; where no line matched any signature, they
    add at most PROSE_SHOWN `possible` entries of an engine the report names (any, if it names none).
    Where no line is known at all and a message page outranks every entry (`ex.extract 返回 -100`), that
    message is returned: its page lists the causes."""
    by_slug = {x.entry.slug: x for x in explained}
    added = 0
    matched = any(x.confidence == MATCH for x in explained)
    pages = _index(entries, messages).rank(whole)
    ranked = [t for t in pages if isinstance(t[0], Entry)]
    # of the named engines' pages (any, if none is named), as the box ranks them
    first = next((p for p, _, _ in pages if not named or named & set(p.engines if isinstance(p, Message)
                                                                     else p.meta.engines)), None)
    told = [first] if isinstance(first, Message) and not (lines_spoke or known_line) else []
    floor = PROSE_RELATIVE * ranked[0][1] if ranked else 0.0
    for e, score, words in ranked:
        if e.slug in by_slug:
            by_slug[e.slug].words, by_slug[e.slug].prose = words, score
            continue
        if e.slug in refuted:
            continue  # the report's own line rules it out, whatever its words
        if matched or lines_spoke or added >= PROSE_SHOWN or score < floor or len(words) < PROSE_SHARED:
            continue
        if named and not named & set(e.meta.engines):
            continue  # the report says which engine it is about
        explained.append(Explained(e, [], [], messages, words, score))
        added += 1
    return told
