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

import bisect
import contextlib
import functools
import itertools
import json
import math
import os
import re
import stat
import sys
from dataclasses import dataclass, field

from convkb import messages as message_index
from convkb.entries import Entry, load_all
from convkb.match import codes, noise
from convkb.match.links import message_url, page_url, search_url
from convkb.match.logfile import Kept, blocks, line_literals, open_log
from convkb.schema import Message, Signature

WEAK = 0.3  # weight of a symptom signature next to an engine message of the same length
DISTINCT = 12  # literal characters that make a symptom pattern count even without the engine named
SHOWN = 300  # characters of a matched line shown
EVIDENCE = 3.0  # score of a piece of evidence: more than any one message
MATCH, POSSIBLE = "match", "possible"
CAUSES_SHOWN = 4  # upstream causes of a generic message listed in the text output
# Prose (convkb.match.words): a report's words rank entries when no line names one. Tuned on the tune half
# of bench/real_logs only.
PROSE_RELATIVE = 0.5  # an entry found by words alone scores at least this fraction of the best one
PROSE_SHARED = 2  # and shares at least this many of the report's words
PROSE_SHOWN = 3  # at most this many entries from words alone
PROSE_WEIGHT = 0.05  # words order results that lines found, never outweigh a line


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


@dataclass(frozen=True)
class Evidence:
    """A piece of a log specific to an entry: where one of its signatures' evidence regexes matched."""

    sig: Signature
    pattern: str
    number: int  # line number where the match starts
    line: str


@dataclass
class Explained:
    entry: Entry
    hits: list[Hit]  # of one entry, one per signature, best first
    evidence: list[Evidence]
    messages: dict[str, Message]  # the message index, to tell generic messages from specific ones
    words: list[str] = field(default_factory=list)  # the report's words the entry shares (convkb.match.words)
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


LAYER_LINE = re.compile(r"layer (\S+) not exists or registered", re.IGNORECASE)


def native_ncnn_layer(name: str) -> bool:
    """Whether ncnn defines a layer of that name (a build may leave it out, e.g. ArgMax is OFF by default)."""
    return name in _NATIVE


# The layer names ncnn's src/CMakeLists.txt registers (ncnn_add_layer). A static list, not the installed ncnn's
# registry: importing ncnn costs kb explain a second; tests/test_speed.py checks it against the installed ncnn.
NCNN_LAYER_NAMES = """AbsVal ArgMax BatchNorm Bias BNLL Concat Convolution Crop Deconvolution Dropout Eltwise ELU Embed
Exp Flatten InnerProduct Input Log LRN MemoryData MVN Pooling Power PReLU Proposal Reduction ReLU Reshape ROIPooling
Scale Sigmoid Slice Softmax Split SPP TanH Threshold Tile RNN LSTM BinaryOp UnaryOp ConvolutionDepthWise Padding
Squeeze ExpandDims Normalize Permute PriorBox DetectionOutput Interp DeconvolutionDepthWise ShuffleChannel
InstanceNorm Clip Reorg YoloDetectionOutput Quantize Dequantize Yolov3DetectionOutput PSROIPooling ROIAlign Packing
Requantize Cast HardSigmoid SELU HardSwish Noop PixelShuffle DeepCopy Mish StatisticsPooling Swish Gemm GroupNorm
LayerNorm Softplus GRU MultiHeadAttention GELU Convolution1D Pooling1D ConvolutionDepthWise1D Convolution3D
ConvolutionDepthWise3D Pooling3D MatMul Deconvolution1D DeconvolutionDepthWise1D Deconvolution3D
DeconvolutionDepthWise3D Einsum DeformableConv2D GLU Fold Unfold GridSample CumulativeSum""".split()
_NATIVE = frozenset(NCNN_LAYER_NAMES)


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
    # Case-insensitive: people retell a message in their own case ("unsupported slice step !").
    return Rule(e, s, re.compile(rx, re.IGNORECASE), re.compile(rx, re.MULTILINE | re.IGNORECASE), weak,
                not distinct, _weight(rx, weak))


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
    from convkb.judge import ERRORISH

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
        found_here = _matches(table, text, block, low)
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
    shown = [m for m in messages.values() if _search(m.pattern, whole, low)]
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
    ranked = sorted(explained, key=lambda x: (x.confidence != MATCH, -x.score, -len(x.hits), x.entry.meta.id))
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
    from convkb.match.words import Index

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


def required_literal(pattern: str) -> str:
    """The longest text any match of the pattern must contain ("" if unknown): a substring test
    before the regex, so that a pattern that cannot match skips a slow scan of a large log."""
    from re import _parser as sre

    try:
        parsed = sre.parse(pattern)
    except re.error:
        return ""
    if parsed.state.flags & re.IGNORECASE:
        return ""
    best = cur = ""
    for op, av in parsed:
        if op is sre.LITERAL:
            cur += chr(av)
            continue
        best, cur = max(best, cur, key=len), ""
    return max(best, cur, key=len)


def _search(pattern: str, text: str, low: str | None = None) -> re.Match | None:
    """The pattern in the text; case-insensitively when `low` (the text lowercased) is given."""
    lit = required_literal(pattern)
    if low is None:
        return None if lit and lit not in text else re.search(pattern, text)
    return None if lit and lit.lower() not in low else re.search(pattern, text, re.IGNORECASE)


_WILDCARD = re.compile(r"\\[wWsSdD]|(?<!\\)[.\[]")  # a class that stands for any op name


def op_claims(entries: list[Entry]) -> list[tuple[str, re.Pattern]]:
    """(entry, regex) for each log signature that names its op literally ('Gather not supported yet'):
    a line such a pattern matches is claimed by that entry, whatever its own evidence says."""
    out = []
    for e in entries:
        for s in e.meta.signatures:
            if s.kind == "log" and s.pattern and not _WILDCARD.search(s.pattern):
                out.append((e.slug, re.compile(s.pattern, re.IGNORECASE)))
    return out


def _shape_failure_after(e: Entry, sig: Signature, whole: str, end: int) -> bool:
    """Whether another of the entry's log messages (the shape-consuming op failing) follows position `end`."""
    rest = whole[end:]
    return any(s.kind == "log" and s.pattern and s is not sig and re.search(s.pattern, rest, re.IGNORECASE)
               for s in e.meta.signatures)


def evidence(e: Entry, whole: str, claims: list[tuple[str, re.Pattern]] = ()) -> list[Evidence]:
    """The first match of each of the entry's evidence regexes in the whole log.

    A named group `custom_op` must capture an op that neither ONNX nor onnxruntime defines, and the entry's
    mechanism must show: another of its messages (a shape-consuming op failing) later in the log. Evidence
    on one line that another entry's signature names literally (`claims`) is shared, so it names neither."""
    out = []
    for s in e.meta.signatures:
        for rx in s.evidence:
            lit = required_literal(rx)
            for m in re.finditer(rx, whole) if not lit or lit in whole else ():
                if "custom_op" in m.re.groupindex and m.group("custom_op"):
                    if message_index.defined_op(m.group("custom_op")):
                        continue
                    if "\n" not in m.group(0) and not _shape_failure_after(e, s, whole, m.end()):
                        continue  # an unknown op with nothing downstream failing: not this entry's mechanism
                if (layer := LAYER_LINE.search(m.group(0))) and native_ncnn_layer(layer[1]):
                    continue  # a bare name of a native ncnn layer is no evidence (a build may leave it out)
                if "\n" not in m.group(0) and _claimed_by_another(e, whole, m, claims):
                    continue
                starts = [m.start(g) for g in range(1, (m.re.groups or 0) + 1) if m.start(g) >= 0]
                at = min(starts) if starts and m.start() == m.end() else m.start()  # lookaheads: their groups
                number = whole.count("\n", 0, at)
                end = whole.find("\n", at)
                begin = whole.rfind("\n", 0, at) + 1
                out.append(Evidence(s, rx, number + 1, whole[begin:end if end >= 0 else len(whole)]))
                break
    return out


def _claimed_by_another(e: Entry, whole: str, m: re.Match, claims: list[tuple[str, re.Pattern]]) -> bool:
    begin = whole.rfind("\n", 0, m.start()) + 1
    end = whole.find("\n", m.end())
    line = whole[begin:end if end >= 0 else len(whole)]
    return any(slug != e.slug and rx.search(line) for slug, rx in claims)


# ---- what a log refutes: the value a generic message names is not the one an entry's evidence needs ----------

_PLACEHOLDER = re.compile(r"<([\w ]+)>")


@dataclass(frozen=True)
class Template:
    """A message's template as a regex whose groups capture its values (`These Op Not Support: <domain>::<op>`)."""

    rx: re.Pattern
    names: tuple[str, ...]  # the placeholders, in order
    more: re.Pattern | None  # one more item of a list the message may go on with (`| ONNX::IsInf`)
    listed: int  # how many of the last placeholders such an item repeats


@functools.lru_cache(maxsize=None)
def template(text: str) -> Template | None:
    """None for a template without a value. Its trailing punctuation is optional: people retell lines without it."""
    text = text.strip().rstrip("!.:").rstrip()
    names = tuple(n.strip() for n in _PLACEHOLDER.findall(text))
    if not names:
        return None
    parts = _PLACEHOLDER.split(text)[::2]  # the literal text around the placeholders
    lit = [r"\s+".join(re.escape(w) for w in p.split(" ")) for p in parts]
    rx = "(?<![^\\s|,])" * (parts[0] == "")  # a leading value starts a word
    for i in range(len(names)):
        last = i == len(names) - 1 and parts[-1] == ""
        rx += lit[i] + ("([^\\s|,]+)" if last else "([^\\s|,]+?)")
    rx += lit[-1]
    more, listed = None, 0
    if parts[-1] == "":  # the line may list several: the trailing values joined by their own text (`<domain>::<op>`)
        listed = 1
        while listed < len(names) and parts[-1 - listed].strip() and " " not in parts[-1 - listed].strip():
            listed += 1
        item = "".join(lit[len(names) - listed + k] * (k > 0) + "([^\\s|,]+?)" * (k < listed - 1)
                       + "([^\\s|,]+)" * (k == listed - 1) for k in range(listed))
        more = re.compile(r"\s*\|\s*" + item, re.IGNORECASE)
    return Template(re.compile(rx, re.IGNORECASE), names, more, listed)


def named_values(shown: list[Message], whole: str) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """message id -> (the text, its values) for each time the log shows a message whose template has values;
    a list (`These Op Not Support: ONNX::A | ONNX::B`) counts as one time per item."""
    out: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for m in shown:
        t = template(m.template)
        if t is None:
            continue
        rx = re.compile(m.pattern, re.IGNORECASE | re.MULTILINE)
        read = set()
        for found in rx.finditer(whole):
            begin = whole.rfind("\n", 0, found.start()) + 1
            if begin in read:
                continue  # the message twice on one line: the line is read once
            read.add(begin)
            end = whole.find("\n", found.end())
            line = whole[begin:end if end >= 0 else len(whole)]
            for v in t.rx.finditer(line):
                out.setdefault(m.id, []).append((v.group(0), v.groups()))
                at = v.end()
                while t.more and (item := t.more.match(line, at)):
                    out[m.id].append((item.group(0).strip(" |"), v.groups()[:-t.listed] + item.groups()))
                    at = item.end()
    return out


def _substitute(example: str, t: Template, values: tuple[str, ...]) -> tuple[str, int, int] | None:
    """The example with the log's values in place of its own, and where they are (start, end)."""
    m = t.rx.search(example)
    if m is None:
        return None
    out, at = [], m.start()
    for i, v in enumerate(values, 1):
        out += [example[at:m.start(i)], v]
        at = m.end(i)
    line = example[:m.start()] + "".join(out) + example[at:]
    return line, m.start(), m.start() + len(line) - len(example) + m.end() - m.start()


def _holds(rx: str, text: str, span: tuple[int, int]) -> bool:
    """Whether the evidence regex matches the text on the span, as evidence() reads it: an op its
    `custom_op` group captures must be defined by neither ONNX nor onnxruntime."""
    for m in re.finditer(rx, text):
        if m.start() >= span[1] or (m.end() <= span[0] and m.end() > m.start()):
            continue  # about other lines, not this one
        if "custom_op" in m.re.groupindex and m.group("custom_op") and message_index.defined_op(m.group("custom_op")):
            continue
        return True
    return False


def refutation(e: Entry, values: dict[str, list[tuple[str, tuple[str, ...]]]], messages: dict[str, Message]) -> str:
    """Why the log rules the entry out ("" if it does not). The entry's log signatures cite a message the log
    shows with values (the op or layer named, a count, a mode); put the log's values in each one's example in
    place of its own: if, for every time the log shows the message, no such signature's pattern matches any more,
    or none of its evidence regexes that read the example's line does, the log names another op (count, mode)
    than the ones the entry needs. A regex that never reads that line (another line, the .param) says nothing."""
    examples = [s.example for s in e.meta.signatures if s.example]
    joined = "\n".join(examples)
    citing: dict[str, list[Signature]] = {}
    for s in e.meta.signatures:
        if s.kind == "log" and s.example and s.message in values and s.message in messages:
            citing.setdefault(s.message, []).append(s)
    for mid, sigs in citing.items():
        t = template(messages[mid].template)
        checks = [c for s in sigs if (c := _check(s, t, joined))]
        if len(checks) < len(sigs):
            continue  # a signature of that message the log's values cannot contradict
        if not any(fits(vals) for _, vals in values[mid] for fits in checks):
            shown = ", ".join(dict.fromkeys(f'"{text}"' for text, _ in values[mid]))
            slot = "/".join(f"<{n}>" for n in t.names[-max(t.listed, 1):])
            return (f"the log shows {shown}, and this entry needs another {slot} there "
                    f"(signature{'s' * (len(sigs) > 1)} {', '.join(s.id for s in sigs)})")
    return ""


def _check(s: Signature, t: Template, joined: str):
    """A test of the log's values against the signature (None if no value can contradict it): its pattern, and
    its evidence regexes that read its example's line (alone, or among the entry's other examples)."""
    at = joined.find(s.example)
    reading = []  # (regex, whether it reads the example among the others)
    for rx in s.evidence:
        if _holds(rx, s.example, (0, len(s.example))):
            reading.append((rx, False))
        elif _holds(rx, joined, (at, at + len(s.example))):
            reading.append((rx, True))
    pattern = re.compile(s.pattern, re.IGNORECASE) if s.pattern and re.search(s.pattern, s.example, re.I) else None
    if not reading and pattern is None:
        return None

    own = t.rx.search(s.example)
    # A pattern that names the values it accepts (`layer (Reduce\w+|pnnx\.Expression) not exists`) decides alone:
    # its evidence then proves one of them, and does not exclude the others.
    constrains = pattern is not None and own is not None and all(
        (blank := _substitute(s.example, t, own.groups()[:i] + ("90817" if own.group(i + 1).isdigit() else "Zqxv",)
                              + own.groups()[i + 1:])) is not None
        and not pattern.search(blank[0]) for i in range(len(own.groups())))  # no slot takes just any value

    def fits(vals: tuple[str, ...]) -> bool:
        sub = _substitute(s.example, t, vals)
        if sub is None or own is None:
            return True  # the example does not fit its message's template: nothing to compare
        if any(v.isdigit() and not o.isdigit() for v, o in zip(vals, own.groups())):
            return True  # a number where the example has a name (`Compute Shape Error for 36`) says nothing of it
        line, start, end = sub
        if pattern is not None and not pattern.search(line):
            return False
        if constrains:
            return True
        around = joined[:at] + line + joined[at + len(s.example):]
        return not reading or any(_holds(rx, around, (at + start, at + end)) if among else
                                  _holds(rx, line, (start, end)) for rx, among in reading)

    return fits


def _matches(table: list[Rule], text: str, block: list[str], low: str | None = None) -> dict[int, list[Rule]]:
    """Index of each line of the block that some rule matches -> those rules, lines in order. `low`: the text
    lowercased, to skip at C speed a rule whose required text is not in the block."""
    starts: list[int] = []
    found: dict[int, dict[int, Rule]] = {}
    for r in table:
        if low is not None and (lit := _rule_literal(r.rx.pattern)) and lit not in low:
            continue
        for m in r.scan.finditer(text):
            if not starts:
                starts = list(itertools.accumulate((len(ln) + 1 for ln in block[:-1]), initial=0))
            i = bisect.bisect_right(starts, m.start()) - 1
            if r.rx.search(block[i]):  # confirmed on the line alone, as a pattern is written for one line
                found.setdefault(i, {})[id(r)] = r
    return {i: list(found[i].values()) for i in sorted(found)}


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


@functools.lru_cache(maxsize=None)
def _rule_literal(pattern: str) -> str:
    """The text any match of a rule holds, lowercased (rules match case-insensitively); "" if unknown."""
    return required_literal(pattern).lower()


def explain_command(log: str | None, as_json: bool, markdown: bool = False, engines: list[str] = ()) -> int:
    """Print the entries whose signatures the log shows, matches first; return 1 if any is reported
    (`match` or `possible`), 0 if none (KBError on bad input). `markdown`: the reply to paste instead."""
    wanted = []
    if engines:  # convkb.match.status reads records (pydantic models): only when asked
        from convkb.match.status import parse_engines

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
        from convkb.match.reply import reply

        print(reply(ranked, "\n".join(lines), wanted, seen, told))
        return codes.FOUND if ranked else codes.NOTHING_FOUND
    if as_json:
        print(json.dumps([_as_json(x) for x in ranked], indent=1))
    elif ranked:
        print(_as_text(name, ranked, seen, entries) + "".join(f"\n\n{_told(m)}" for m in told)
              + "".join(f"\n{line}" for line in _ruled(ruled)))
    if not ranked:
        hint = f"{name}: no known problem matches this log. Search the site: {search_url(_query(query))}"
        for m in seen:
            hint += f"\nIt shows {'a generic' * m.generic or 'a'} message with known causes: {message_url(m.id)}"
        hint += "".join(f"\n{_told(m)}" for m in told) + "".join(f"\n{line}" for line in _ruled(ruled))
        print(hint, file=sys.stderr if as_json else sys.stdout)
    return codes.FOUND if ranked else codes.NOTHING_FOUND


def _ruled(ruled: list[Explained]) -> list[str]:
    """The entries the log itself rules out, and why: they print its message too, but not with what it names."""
    if not ruled:
        return []
    out = ["", "Ruled out by the log itself (their message, but not with what the log names):"]
    return out + [f"   {x.entry.meta.id}  {x.entry.meta.title}: {x.refuted}" for x in ruled]


def _told(m: Message) -> str:
    """A message the report's words describe (no line of it in the report): its page lists the causes."""
    return (f"The report's words describe the message \"{m.shown}\" best (a guess from words; no line of it "
            f"is in the report): its {len(m.causes)} known upstream causes and what tells them apart: {message_url(m.id)}")


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


def _as_json(x: Explained) -> dict:
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
        out += ["", f"The line \"{line}\" is a generic message: {total} known causes print it "
                    f"({', '.join(citing)} here, and {len(m.causes)} upstream), so this line alone names none of them."]
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
            for line in ("", f"The log also shows \"{m.shown}\", a {'generic ' * m.generic}message with "
                             f"{len(m.causes)} known upstream causes: {message_url(m.id)}")]


def _query(line: str | None) -> str:
    """A search query from an error line: its words without the noise (convkb.match.noise: timestamps, folders,
    file names, addresses), as the site's search box strips it too."""
    words = noise.query(line or "").split() or (line or "").split()
    return " ".join(words[:12])
