"""The pages a pasted engine line names by itself, for the site's search box: kb explain's rules, cut down to
one line; docs/assets/kb-lines.js reads the same rules in the browser.

    Table.build(entries, messages)   the rules: an entry's specific regexes, then the message index's patterns
    Table.pages(text)                the pages the text names, best first: those citing an issue it names, then its lines'
    Table.reduce(text)               a multi-line paste's lines worth searching for (its known lines, else its errors)
    Table.data()                     the rules for the browser: docs/assets/kb-lines.js's `window.kbLines(text)` is
                                     pages() there (and kbLines.preferred, kbLines.reduce)

A line is matched as explain judges its confidence: an entry's evidence regex, or a log signature whose message
is not generic, names that entry (`match`); a message's pattern names the message's page, where a generic line's
causes are told apart. Entries come first, by how much fixed text their regex demands; then message pages, in
the order the text shows them (in a log the first error is the cause, those after it its consequences), a
secondary one (a segfault, "network graph not ready", a harmless first-run line) last.
As in explain, a bare native ncnn layer name is no entry's evidence, and evidence on a line another entry's
literal signature names is not this entry's. Unlike explain, every regex is read ignoring case and ASCII-only
(`\\w` is no CJK character, as in JavaScript): a user retells a message in any case, glued to Chinese words.
Regexes that need more than a regex (a custom op checked against ONNX's op list) are left to kb explain.
tests/test_site_browser.py runs both on the same lines and compares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import NamedTuple

from kb.entries import Entry
from kb.logs import ERRORISH
from kb.match.rules import LAYER_LINE, NCNN_LAYER_NAMES, literal_chars, op_claims
from kb.match.words import ENGINE_WORDS, ISSUE, REF, Index, named_engines, query_groups
from kb.schema import Message

ENTRY, MESSAGE = "entry", "message"
# A word that names an engine: its name, alone or starting a tool's name (MNNConvert, mnnquant, ncnn2table,
# pnnxparam); onnx2ncnn is not ncnn's word (the '2' before it), it is its own.
# A line that reads like an error, as kb explain finds a log's first error (kb.logs.ERRORISH), in the part of
# regex syntax both languages read alike.
_ERRORISH = re.compile(ERRORISH.pattern, re.IGNORECASE | re.ASCII)
_FLAGS = re.compile(r"^\(\?([ims]+)\)")
_START = re.compile(r"(?<!\\)((?:\\\\)*)\\A")  # \A, not an escaped backslash before an A
_UNPORTABLE = re.compile(r"\(\?P<custom_op>|\\[AZz]|\(\?[aLux]|\(\?#")


@dataclass(frozen=True)
class Rule:
    page: str  # the site address of the page, as material's search index writes it: "<slug>/", "messages/<id>/"
    kind: str  # ENTRY or MESSAGE
    source: str  # in the syntax Python and JavaScript read alike
    flags: str  # JavaScript flags; "i" always
    evidence: bool  # an evidence regex: yields to another entry's literal claim on the line
    weight: int  # literal characters: the more fixed text, the more specific
    late: bool = False  # a secondary message (never the cause where another shows): after the others

    @cached_property
    def regex(self) -> re.Pattern:
        f = re.IGNORECASE | re.ASCII | (re.DOTALL if "s" in self.flags else 0) | (re.MULTILINE if "m" in self.flags else 0)
        return re.compile(self.source, f)


def _word(w: str) -> str:
    """A word as a regex: a Latin word whole (not inside a longer one), a Chinese one anywhere."""
    body = re.escape(w)
    return rf"(?<![A-Za-z0-9_]){body}(?![A-Za-z0-9_])" if w.isascii() else body


def portable(pattern: str) -> tuple[str, str] | None:
    """(source, flags) that Python and JavaScript read alike, or None if the regex cannot be."""
    flags = "i"
    if m := _FLAGS.match(pattern):
        flags += "".join(sorted(set(m[1]) - {"i"}))
        pattern = pattern[m.end():]
    if "m" not in flags:  # without multiline, ^ is the start of the text in both, as \A is in Python
        pattern = _START.sub(r"\1^", pattern)
    if _UNPORTABLE.search(pattern) or "(?" in pattern.replace("(?:", "").replace("(?=", "").replace("(?!", "") \
            .replace("(?<=", "").replace("(?<!", "").replace("(?i:", "").replace("(?P<", ""):
        return None
    # Every rule ignores case, so a scoped (?i:...) is a plain group; (?P<name>...) is JavaScript's (?<name>...).
    return pattern.replace("(?i:", "(?:").replace("(?P<", "(?<"), flags


def _overlaps(claim: re.Pattern, text: str, m: re.Match) -> bool:
    """Another entry's literal signature claims the evidence's own words (the same span of the line); a paste
    in the search box has lost its line breaks, so the span, not the line, says which line it is."""
    return any(c.start() < m.end() and m.start() < c.end() for c in claim.finditer(text))


class Hit(NamedTuple):
    """A page a rule names, as a sort key: entries first, a secondary message last, messages in the order the
    text shows them, the more specific rule first; a cause (named by words beside its message's line) just
    before its message."""
    message: bool  # named by a message's pattern, or as one of its causes
    late: bool
    at: int
    specific: int  # minus the rule's literal characters
    rule: int
    own: int  # 0: a cause the message's line names, 1: the rule's own page
    cause: int
    page: str


CAUSE_PAGES = 4  # a word that names one cause of a generic line is on at most this many pages

_LIST = re.compile(r"[\s,;/&]*(?:and|or)?[\s,;/&]*")  # Tencent/ncnn#4803, #4752 and #3297: one tracker's list


def issue_keys(text: str) -> list[str]:
    """The issues a query names, as keys of Table.refs: 'mnn#3977'; a bare '#3977' only as the whole query (in a
    pasted backtrace, '#1 0x7f...' is a frame)."""
    return list(dict.fromkeys(f"{(m[1] or m[3] or '').lower()}#{m[2] or m[4]}" for m in ISSUE.finditer(text)
                              if m[1] or m[3] or m[0] == text.strip()))


def cited(text: str) -> list[str]:
    """The issues a page's text cites, as keys ('ncnn#4752'): a bare number counts where it continues a list of
    one tracker's references."""
    out, repo, end = [], None, -1
    for m in ISSUE.finditer(text):
        if m[1] or m[3]:
            repo = (m[1] or m[3]).lower()
        elif not (repo and _LIST.fullmatch(text, end, m.start())):
            repo = None
            continue
        out.append(f"{repo}#{m[2] or m[4]}")
        end = m.end()
    return out


def _refs(entries: list[Entry], messages: dict[str, Message]) -> dict[str, list[str]]:
    """Issue key -> the pages citing it: those whose data lists it (an entry's upstream, a message's causes) first,
    then those whose text names it; a bare '#N' key holds every tracker's #N."""
    listed: dict[str, list[str]] = {}
    named: dict[str, list[str]] = {}

    def add(into: dict, ref: str, page: str) -> None:
        repo, num = ref.lower().split("#")
        for key in (f"{repo.split('/')[-1]}#{num}", f"#{num}"):
            if page not in into.setdefault(key, []):
                into[key].append(page)

    for e in entries:
        for u in e.meta.upstream:
            add(listed, u.ref, f"{e.slug}/")
        for key in cited(e.body + "\n" + "\n".join(u.note for u in e.meta.upstream)):
            add(named, key, f"{e.slug}/")
    for m in messages.values():
        for c in m.causes:
            add(listed, c.ref, f"messages/{m.id}/")
        for key in cited("\n".join([m.summary, m.zh, *(c.cause for c in m.causes)])):
            add(named, key, f"messages/{m.id}/")
    return {key: list(dict.fromkeys(listed.get(key, []) + named.get(key, []))) for key in sorted({*listed, *named})}


@dataclass
class Table:
    rules: list[Rule]
    claims: list[Rule]  # literal signatures that claim a line for their entry (explain's op claims)
    native: list[str] = field(default_factory=list)  # ncnn's own layers: a bare name of one is no evidence
    # Per message page, the entries that cite it, each by the words that name it alone among them: with a
    # generic line, the query's own words may say which cause it is (explain's `possible`, ranked by words).
    causes: dict[str, list[Rule]] = field(default_factory=dict)
    engines: dict[str, list[str]] = field(default_factory=dict)  # page -> the engines it is about
    refs: dict[str, list[str]] = field(default_factory=dict)  # issue key (issue_keys) -> the pages citing it

    @classmethod
    def build(cls, entries: list[Entry], messages: dict[str, Message]) -> Table:
        rules: list[Rule] = []

        def rule(page: str, kind: str, pattern: str, evidence: bool) -> Rule | None:
            p = portable(pattern)
            return None if p is None else Rule(page, kind, p[0], p[1], evidence, literal_chars(p[0]))

        def add(page: str, kind: str, pattern: str, evidence: bool) -> None:
            if r := rule(page, kind, pattern, evidence):
                rules.append(r)

        for e in entries:
            for s in e.meta.signatures:
                if s.kind != "log":
                    continue
                if s.pattern and not (s.message and (s.message not in messages or messages[s.message].generic)):
                    add(f"{e.slug}/", ENTRY, s.pattern, evidence=False)
                for rx in s.evidence:
                    add(f"{e.slug}/", ENTRY, rx, evidence=True)
        for m in messages.values():
            if r := rule(f"messages/{m.id}/", MESSAGE, m.pattern, evidence=False):
                rules.append(replace(r, late=m.secondary))
        claims = [r for slug, rx in op_claims(entries) if (r := rule(f"{slug}/", ENTRY, rx.pattern, False))]
        causes = {}
        weights = Index(entries, messages.values()).weights  # the pages' words, as kb explain and the box cut them

        def rare(phrase: str) -> bool:
            """Some thing it says is on few pages, in every spelling and piece: int8 (in ncnn's Vulkan banner) or
            量化模型 (量化, a quantized model) are said of many pages, so they name no one cause."""
            return any(max(len(weights.get(t, ())) for t in g) <= CAUSE_PAGES for g in query_groups(phrase))

        for m in messages.values():
            citing = [e for e in entries if any(s.message == m.id for s in e.meta.signatures)]
            own = f"{m.template} {m.example}".lower()  # the message's own words name no cause
            said = [{w.lower() for w in e.meta.synonyms
                     if len(w) >= 4 and not re.search(m.pattern, w, re.I) and w.lower() not in own and rare(w)}
                    for e in citing]
            causes[f"messages/{m.id}/"] = [
                Rule(f"{e.slug}/", ENTRY, _word(w), "i", False, len(w))
                for e, words in zip(citing, said)
                for w in sorted(words - set().union(*(o for o in said if o is not words)))]
        # ncnn's source list, not the installed registry: the site is built where no engine is installed.
        engines = {f"{e.slug}/": list(e.meta.engines) for e in entries}
        engines.update({f"messages/{m.id}/": list(m.engines) for m in messages.values()})
        return cls(rules, claims, sorted(NCNN_LAYER_NAMES), causes, engines, _refs(entries, messages))

    def hits(self, text: str) -> list[Hit]:
        """Every page a rule names in the text, once per rule (a page may come several times), in no order."""
        hits = []
        for i, r in enumerate(self.rules):
            m = r.regex.search(text)
            if not m:
                continue
            if r.kind == ENTRY:
                layer = LAYER_LINE.search(m.group(0))
                if layer and layer[1] in self.native:
                    continue
                if r.evidence and any(c.page != r.page and _overlaps(c.regex, text, m) for c in self.claims):
                    continue
            at = m.start() if r.kind == MESSAGE else 0  # messages in the order the text shows them
            if r.kind == MESSAGE:
                rest = f"{text[:m.start()]}\n{text[m.end():]}"  # a cause is named by words besides the line
                hits += [Hit(True, r.late, at, -r.weight, i, 0, j, c.page)
                         for j, c in enumerate(self.causes.get(r.page, ())) if c.regex.search(rest)]
            hits.append(Hit(r.kind != ENTRY, r.late, at, -r.weight, i, 1, 0, r.page))
        return hits

    def pages(self, text: str) -> list[str]:
        """The pages the text names, best first: those citing an issue it names (a user who gives the thread wants
        the page about it), then hits() in their order."""
        out: list[str] = list(dict.fromkeys(p for key in issue_keys(text) for p in self.refs.get(key, ())))
        for h in sorted(self.hits(text)):
            if h.page not in out:
                out.append(h.page)
        return out

    def reduce(self, text: str) -> list[str]:
        """A multi-line paste cut down to the lines worth searching for: those a rule names a page by (as in the
        text: a rule's match may span lines), else those that read like an error (kb explain's ERRORISH); without
        either, every line. ncnn follows 'find_blob_index_by_name data failed' with 'Try' and 'ex.input("in0",
        in0);' lines, whose words are in no page. Lines stripped, empty ones dropped."""
        lines = [(m.start(), m.end()) for m in re.finditer(r"[^\r\n]+", text)]
        keep = set()
        for r in self.rules:
            if m := r.regex.search(text):
                keep.update(i for i, (a, b) in enumerate(lines) if a < max(m.end(), m.start() + 1) and m.start() < b)
        if not keep:
            keep = {i for i, (a, b) in enumerate(lines) if _ERRORISH.search(text[a:b])}
        out = [text[a:b].strip() for i, (a, b) in enumerate(lines) if not keep or i in keep]
        return [line for line in out if line]

    def preferred(self, text: str) -> list[str]:
        """The pages of the engines the text names (none if it names none): a query that says `ncnn` is
        not about an MNN page, whatever words they share (as kb explain keeps word-only results to the
        engines a report names)."""
        named = named_engines(text)
        return [page for page, engines in self.engines.items() if named & set(engines)]

    def data(self) -> dict:
        """The rules for the browser: docs/assets/kb-lines.js reads them as pages(), preferred() and reduce() do."""
        def js(rules: list[Rule]) -> list[dict]:
            return [{"page": r.page, "kind": r.kind, "source": r.source, "flags": r.flags, "evidence": r.evidence,
                     "weight": r.weight, "late": r.late} for r in rules]

        return {"rules": js(self.rules), "claims": js(self.claims), "native": self.native,
                "causes": {page: js(rules) for page, rules in self.causes.items() if rules},
                "engineWords": ENGINE_WORDS, "engines": self.engines, "errorish": _ERRORISH.pattern, "ref": REF.pattern,
                "issue": ISSUE.pattern, "refs": self.refs}
