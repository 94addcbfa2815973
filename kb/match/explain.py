"""`kb explain [LOG]`: the known problems whose signatures appear in a log, best first.

Signatures of kind `log` are an engine's own message and count as they are. Crash, NaN and
mismatch signatures describe symptoms many causes share, so they weigh less, and a short one
(e.g. `SIGSEGV`) counts only when the log also names one of the entry's engines.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re
import sys
from dataclasses import dataclass

from kb.entries import Entry, load_all
from kb.match import codes
from kb.match.links import page_url, search_url
from kb.match.logfile import blocks, open_log
from kb.schema import Signature

WEAK = 0.3  # weight of a symptom signature next to an engine message of the same length
DISTINCT = 12  # literal characters that make a symptom pattern count even without the engine named
SHOWN = 300  # characters of a matched line shown


@dataclass(frozen=True)
class Rule:
    entry: Entry
    sig: Signature
    rx: re.Pattern  # matched against one line
    scan: re.Pattern  # the same, multiline: finds candidate lines in a block of lines at C speed
    weak: bool  # a symptom (crash, nan, mismatch), not an engine's own message
    needs_engine: bool  # counts only if the log names one of the entry's engines
    weight: float


@dataclass
class Hit:
    rule: Rule
    number: int  # line number of the first occurrence
    line: str
    shared: int  # how many entries matched that same line: a line common to several says less of each
    count: int = 1

    @property
    def score(self) -> float:
        return self.rule.weight / self.shared

    def order(self) -> tuple[float, int]:
        """Best first: the highest score, then the earliest line."""
        return -self.score, self.number


@dataclass
class Explained:
    hits: list[Hit]  # of one entry, one per signature, best first

    @property
    def entry(self) -> Entry:
        return self.hits[0].rule.entry

    @property
    def score(self) -> float:
        return sum(h.score for h in self.hits)


def literal_chars(pattern: str) -> int:
    """How much fixed text a regex demands: its specificity."""
    classes = re.sub(r"\\[A-Za-z]|\[(?:\\.|[^\]])*\]|\{\d*,?\d*\}|(?<!\\)[.*+?()|^$]", "", pattern)
    return len(re.sub(r"\\(.)", r"\1", classes))


def _weight(pattern: str, weak: bool) -> float:
    # Logarithmic: a long message is more specific than a short one, but two messages of one problem
    # say more than one long message.
    return (WEAK if weak else 1.0) * math.log2(1 + literal_chars(pattern))


def _from_example(example: str) -> str:
    """The example line as a regex: any numbers, any amount of spacing."""
    rx = re.escape(" ".join(example.split()))
    rx = re.sub(r"\d+(?:\\\.\d+)?", r"\\d+(?:\\.\\d+)?", rx)
    return rx.replace(r"\ ", r"\s+")


def rules(entries: list[Entry]) -> list[Rule]:
    out = []
    for e in entries:
        for s in e.meta.signatures:
            if s.kind == "log":
                out.append(_rule(e, s, s.pattern, weak=False, distinct=True))
                continue
            # A crash pattern names the signal; its example is how the crash reads in a log.
            sources = [(s.pattern, literal_chars(s.pattern) >= DISTINCT)] if s.pattern else []
            if s.example and (s.kind == "crash" or not s.pattern):
                sources.append((_from_example(s.example), False))
            out += [_rule(e, s, rx, weak=True, distinct=distinct) for rx, distinct in sources]
    return out


def _rule(e: Entry, s: Signature, rx: str, weak: bool, distinct: bool) -> Rule:
    return Rule(e, s, re.compile(rx), re.compile(rx, re.MULTILINE), weak, not distinct, _weight(rx, weak))


def explain(name: str, stream, entries: list[Entry]) -> tuple[list[Explained], str | None]:
    """The entries matched, best first, and the line to search the site for: the log's first
    error-like line, else its last line."""
    from kb.judge import ERRORISH

    errorish = re.compile(ERRORISH.pattern)  # searched in lowercased text: much faster than IGNORECASE
    table = rules(entries)
    hits: dict[int, Hit] = {}  # id(rule) -> its first line
    named: set[str] = set()  # engines the log mentions
    engines = {en for e in entries for en in e.meta.engines}
    first_error = last = None
    for first, block in blocks(name, stream):
        text = "\n".join(block)
        low = text.lower()
        named.update(en for en in engines if en in low)
        last = next((ln for ln in reversed(block) if ln), last)
        if first_error is None and not hits and (m := errorish.search(low)):  # only needed if nothing matches
            first_error = block[text.count("\n", 0, m.start())]
        for i, matched in _matches(table, text, block).items():
            shared = len({r.entry.slug for r in matched})
            for r in matched:
                if id(r) in hits:
                    hits[id(r)].count += 1
                else:
                    hits[id(r)] = Hit(r, first + i, block[i], shared)
    found: dict[str, dict[str, Hit]] = {}  # entry -> signature -> its best hit
    for h in hits.values():
        if h.rule.needs_engine and not named & set(h.rule.entry.meta.engines):
            continue
        per = found.setdefault(h.rule.entry.slug, {})
        if h.rule.sig.id not in per or h.order() < per[h.rule.sig.id].order():
            per[h.rule.sig.id] = h
    explained = [Explained(sorted(per.values(), key=Hit.order)) for per in found.values()]
    ranked = sorted(explained, key=lambda x: (-x.score, -len(x.hits), x.entry.meta.id))
    return ranked, first_error or last


def _matches(table: list[Rule], text: str, block: list[str]) -> dict[int, list[Rule]]:
    """Index of each line of the block that some rule matches -> those rules, lines in order."""
    starts: list[int] = []
    found: dict[int, dict[int, Rule]] = {}
    for r in table:
        for m in r.scan.finditer(text):
            if not starts:
                starts = list(itertools.accumulate((len(ln) + 1 for ln in block[:-1]), initial=0))
            i = bisect.bisect_right(starts, m.start()) - 1
            if r.rx.search(block[i]):  # confirmed on the line alone, as a pattern is written for one line
                found.setdefault(i, {})[id(r)] = r
    return {i: list(found[i].values()) for i in sorted(found)}


def explain_command(log: str | None, as_json: bool) -> int:
    """Print the entries whose signatures the log shows; return 1 if any, 0 if none (KBError on bad input)."""
    entries = load_all()
    name, stream = open_log(log)
    try:
        ranked, query = explain(name, stream, entries)
    finally:
        if log not in (None, "-"):
            stream.close()
    if as_json:
        print(json.dumps([_as_json(x) for x in ranked], indent=1))
    elif ranked:
        print(_as_text(name, ranked))
    if not ranked:
        hint = f"{name}: no known problem matches this log. Search the site: {search_url(_query(query))}"
        print(hint, file=sys.stderr if as_json else sys.stdout)
    return codes.FOUND if ranked else codes.NOTHING_FOUND


def _shown(h: Hit) -> str:
    line = h.line
    if len(line) <= SHOWN:
        return line
    m = h.rule.rx.search(line)
    start = max(0, min(m.start() - SHOWN // 3, len(line) - SHOWN)) if m else 0
    return ("..." if start else "") + line[start:start + SHOWN] + "..."


def _as_json(x: Explained) -> dict:
    best = x.hits[0]
    return {
        "entry": x.entry.slug,
        "id": x.entry.meta.id,
        "title": x.entry.meta.title,
        "score": round(x.score, 2),
        "line": _shown(best),
        "line_number": best.number,
        "signature": best.rule.sig.id,
        "url": page_url(x.entry.slug),
        "signatures": [{"id": h.rule.sig.id, "kind": h.rule.sig.kind, "line": _shown(h), "line_number": h.number,
                        "count": h.count, "weak": h.rule.weak} for h in x.hits],
    }


def _as_text(name: str, ranked: list[Explained]) -> str:
    n = len(ranked)
    out = [f"{name}: {n} known problem{'s' * (n > 1)} match{'es' * (n == 1)} this log{', best first' * (n > 1)}"]
    for rank, x in enumerate(ranked, 1):
        out += ["", f"{rank}. {x.entry.meta.id}  {x.entry.meta.title}"]
        for h in x.hits:
            note = ", a symptom with many causes" if h.rule.weak else ""
            times = f", {h.count} times" if h.count > 1 else ""
            out.append(f"   line {h.number} [{h.rule.sig.id}{note}{times}]: {_shown(h)}")
        out.append(f"   page: {page_url(x.entry.slug)}")
    return "\n".join(out)


def _query(line: str | None) -> str:
    """A search query from an error line: its words, without timestamps, paths and addresses."""
    if not line:
        return ""
    line = re.sub(r"\[?\d{1,4}[-:/]\d{1,2}[-:/]\d{1,4}(?:[ T.,:]?\d+)*\]?", " ", line)  # dates, times
    words = [w for w in line.split() if not re.search(r"[/\\]|0x[0-9a-f]{4,}", w)]
    return " ".join(words[:12])
