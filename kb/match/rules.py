"""The entries' signatures as rules over a log's lines: the hits they make, the evidence specific to one
entry, and the literal text a pattern needs (a substring test before a regex, for large logs)."""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from dataclasses import dataclass

from kb import messages as message_index
from kb.entries import Entry
from kb.schema import Signature

WEAK = 0.3  # weight of a symptom signature next to an engine message of the same length
DISTINCT = 12  # literal characters that make a symptom pattern count even without the engine named


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
            sources = [(s.pattern, literal_chars(s.pattern) >= DISTINCT, s.kind != "crash")] if s.pattern else []
            if s.example and (s.kind == "crash" or not s.pattern):
                sources.append((_from_example(s.example), False, True))
            out += [_rule(e, s, rx, weak=True, distinct=distinct, anycase=anycase) for rx, distinct, anycase in sources]
    return out


def _rule(e: Entry, s: Signature, rx: str, weak: bool, distinct: bool, anycase: bool = True) -> Rule:
    # Case-insensitive: people retell a message in their own case ("unsupported slice step !"). A crash
    # signature's pattern names a signal, which is upper case (SIG\w+ must not read every "Sigmoid").
    flags = re.IGNORECASE if anycase else 0
    return Rule(e, s, _compiled(rx, flags), _compiled(rx, re.MULTILINE | flags), weak, not distinct, _weight(rx, weak))


@functools.cache
def _compiled(rx: str, flags: int) -> re.Pattern[str]:
    # The corpus's ~940 patterns overflow re's own cache (512): kb's contracts and benches, which explain line after
    # line, recompiled every one for every line.
    return re.compile(rx, flags)


@functools.lru_cache(maxsize=4096)
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
    return _longest_text(parsed)


def _longest_text(items) -> str:
    """The longest run of literal characters among parsed regex items."""
    from re import _parser as sre

    best = cur = ""
    for op, av in items:
        if op is sre.LITERAL:
            cur += chr(av)
            continue
        best, cur = max(best, cur, key=len), ""
    return max(best, cur, key=len)


def search(pattern: str, text: str, low: str | None = None) -> re.Match | None:
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


def matches(table: list[Rule], text: str, block: list[str], low: str | None = None) -> dict[int, list[Rule]]:
    """Index of each line of the block that some rule matches -> those rules, lines in order. `low`: the text
    lowercased, to skip at C speed a rule whose required text is not in the block."""
    starts: list[int] = []
    found: dict[int, dict[int, Rule]] = {}
    for r in table:
        if low is not None and (lits := _rule_literals(r.rx.pattern)) and not any(lit in low for lit in lits):
            continue
        for m in r.scan.finditer(text):
            if not starts:
                starts = list(itertools.accumulate((len(ln) + 1 for ln in block[:-1]), initial=0))
            i = bisect.bisect_right(starts, m.start()) - 1
            if r.rx.search(block[i]):  # confirmed on the line alone, as a pattern is written for one line
                found.setdefault(i, {})[id(r)] = r
    return {i: list(found[i].values()) for i in sorted(found)}


@functools.lru_cache(maxsize=None)
def _rule_literals(pattern: str) -> tuple[str, ...]:
    """Texts one of which any match of a rule holds, lowercased (rules match case-insensitively); () if unknown.
    A pattern that is an alternation (`a failed|Invalid model`) needs one of its branches' texts."""
    from re import _parser as sre

    try:
        parsed = sre.parse(pattern)
    except re.error:
        return ()
    if parsed.state.flags & re.IGNORECASE:
        return ()

    items = list(parsed)
    while len(items) == 1 and items[0][0] is sre.SUBPATTERN and not items[0][1][1] and not items[0][1][2]:
        items = list(items[0][1][3])  # (?:...) around the whole pattern
    if len(items) == 1 and items[0][0] is sre.BRANCH:
        branches = [_longest_text(b) for b in items[0][1][1]]
        return tuple(b.lower() for b in branches) if all(branches) else ()
    lit = _longest_text(items)
    return (lit.lower(),) if lit else ()
