"""Read a log as clean lines, in blocks, bounded: at most MAX_BYTES, no line longer than MAX_LINE.

Real logs come with ANSI colours, CRLF or bare-CR line ends (progress bars), UTF-16 from PowerShell,
and sometimes are not logs at all; each of those is handled here, so matching sees plain text lines.
"""

from __future__ import annotations

import bisect
import codecs
import itertools
import re
import sys
from pathlib import Path
from re import _compiler, _parser as sre
from typing import BinaryIO, Callable, Iterable, Iterator

from kb.errors import KBError
from kb.match import codes, noise
from kb.match.paths import input_file

MAX_BYTES = 64 * 2**20  # a larger log is refused: the part around the error is what matters
MAX_LINE = 16 * 2**10  # characters kept of one line; the rest of it is skipped
CHUNK = 2**16
HEAD = 8192  # bytes looked at to tell text from binary
STDIN = "<stdin>"
KEEP_ALL = 2**19  # characters of a log kept as read, for matching over the whole log (class Kept)
KEEP_MAX = 4 * 2**20  # characters kept at most, whatever the log's size
SPECIFIC = 12  # a text this long is rare in any log: its lines are kept up to twice KEEP_MAX
WINDOW = 2  # lines kept on each side of a line that a pattern matching across line ends may need
MIN_LITERAL = 3  # shorter texts ("=", "1") are in most lines: their lines are kept as WINDOW lines of the rest
PLACEHOLDER = "\u2026"  # a line left out: one character no pattern looks for, so line numbers stay as read

_BREAK = re.compile(r"\r\n|\r|\n")


def open_log(log: str | None) -> tuple[str, BinaryIO]:
    """The log's display name and a binary stream. None or '-' is stdin."""
    if log in (None, "-"):
        if sys.stdin is None or sys.stdin.isatty():
            raise KBError(STDIN, "no log given: name a file, or pipe the log in (kb explain < build.log)",
                          codes.EMPTY_LOG)
        return STDIN, sys.stdin.buffer
    path, size = input_file(log)
    if size is not None and size > MAX_BYTES:
        raise KBError(path, _too_large(size), codes.LOG_TOO_LARGE)
    return str(path), path.open("rb")


def _too_large(size: int | None) -> str:
    have = f"{size / 2**20:.0f} MiB" if size else "more"
    return (f"log too large ({have}; kb explain reads at most {MAX_BYTES // 2**20} MiB): pass the part around "
            "the error, e.g. `tail -n 5000 build.log | kb explain`")


def blocks(name: str, stream: BinaryIO) -> Iterator[tuple[int, list[str]]]:
    """The log in blocks of whole lines: (number of the block's first line, its cleaned lines).

    Blocks, not lines, so that matching can run each regex once over a block in C rather than once per
    line in Python. KBError for a binary, empty or oversized log.
    """
    head = stream.read(HEAD)
    encoding = "utf-16" if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
    if encoding != "utf-16" and _binary(head):
        raise KBError(Path(name), "is binary data, not a text log", codes.BINARY_LOG)
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    total, number, rest, skipping, seen_text = 0, 1, "", False, False
    chunk = head
    while chunk:
        total += len(chunk)
        if total > MAX_BYTES:
            raise KBError(Path(name), _too_large(None), codes.LOG_TOO_LARGE)
        rest += decoder.decode(chunk)
        chunk = stream.read(CHUNK)
        # A chunk may end between the \r and \n of one line end: keep that \r for the next round.
        cut = len(rest) - 1 if rest.endswith("\r") and chunk else len(rest)
        *complete, partial = _BREAK.split(rest[:cut])
        rest = partial + rest[cut:]
        if skipping and complete:  # the tail of an overlong line, already given
            complete, skipping = complete[1:], False
        if len(rest) > MAX_LINE and not skipping:
            complete.append(rest)
            rest, skipping = "", True
        elif skipping:
            rest = ""
        if complete:
            block = clean([line[:MAX_LINE] for line in complete])
            seen_text = seen_text or any(block)
            yield number, block
            number += len(block)
    rest += decoder.decode(b"", final=True)
    if rest and not skipping:
        block = clean([rest[:MAX_LINE]])
        seen_text = seen_text or any(block)
        yield number, block
    if not seen_text:
        raise KBError(Path(name), "is empty: no log lines to explain", codes.EMPTY_LOG)


class Kept:
    """The lines of a log that matching over the whole log needs (evidence that spans lines, message pages, the
    reply's quotes and versions), bounded. The first KEEP_ALL characters are kept as read, so a log of ordinary
    size is matched exactly as before. Past them a line is kept only if it holds one of `literals()` (texts that
    every line a pattern's match touches holds: line_literals, each with how many lines around it to keep too),
    or was `marked` (a rule matched it); any other non-blank line becomes PLACEHOLDER, so that line numbers and
    which lines are next to which stay as read. Memory is bounded whatever the log's size: lines are kept up to
    KEEP_MAX characters, and past it only those holding a SPECIFIC text (an error line, not `lstm`), up to twice
    that. The rules see every line as it streams, whatever is kept."""

    def __init__(self, literals: Callable[[], dict[str, int]]):
        self.lines: list[str] = []
        self.size = 0
        self._literals = literals
        self._needed: list[tuple[str, int]] | None = None  # computed when a log outgrows KEEP_ALL: most never do
        self._tail: list[tuple[str, int]] = []
        self._carry_level = 0  # the last WINDOW lines, held until the next block is seen
        self._carry = 0  # lines of the next block within WINDOW of a needed line of this one

    def add(self, block: list[str], low: str, marked: Iterable[int] = ()) -> None:
        """`low`: the block's lines joined by newlines and lowercased; `marked`: indexes of lines to keep."""
        chars = len(low) + 1
        if self._needed is None and self.size + chars <= KEEP_ALL:
            self.lines += block
            self.size += chars
            return
        if self._needed is None:
            self._needed = sorted(self._literals().items(), key=lambda t: -len(t[0]))
        keep = [0] * len(block)  # 0: not needed, 1: needed, 2: holds a SPECIFIC text (kept past KEEP_MAX too)
        hit = dict.fromkeys(marked, (0, 1))  # line -> (lines around it to keep, how much it is needed)
        starts = None
        for lit, reach in self._needed:
            at = low.find(lit)
            if at < 0:
                continue
            if starts is None:  # of `low`'s own lines: lowercasing may change a line's length
                starts = list(itertools.accumulate((len(ln) + 1 for ln in low.split("\n")[:-1]), initial=0))
            while at >= 0:
                i = bisect.bisect_right(starts, at) - 1
                was = hit.get(i, (0, 0))
                hit[i] = (max(was[0], reach), max(was[1], 2 if len(lit) >= SPECIFIC else 1))
                at = low.find(lit, starts[i + 1]) if i + 1 < len(starts) else -1
        for j in range(min(self._carry, len(block))):
            keep[j] = self._carry_level
        for i, (reach, level) in hit.items():
            for j in range(i - reach, i + reach + 1):
                if 0 <= j < len(block):
                    keep[j] = max(keep[j], level)
                elif j < 0 and -j <= len(self._tail):
                    self._tail[j] = (self._tail[j][0], max(self._tail[j][1], level))
        ends = [(i + reach + 1, level) for i, (reach, level) in hit.items() if i + reach + 1 > len(block)]
        self._carry_level = max((lv for _, lv in ends), default=self._carry_level)
        reach_end = max((e for e, _ in ends), default=0)
        self._carry = max(reach_end - len(block), self._carry - len(block), 0)
        pending = self._tail + list(zip(block, keep))
        for line, wanted in pending[:len(pending) - WINDOW]:
            self._commit(line, wanted)
        self._tail = pending[len(pending) - WINDOW:]

    def finish(self) -> list[str]:
        for line, wanted in self._tail:
            self._commit(line, wanted)
        self._tail = []
        return self.lines

    def _commit(self, line: str, wanted: int) -> None:
        if line and not (wanted and self.size + len(line) + 1 <= KEEP_MAX * wanted):
            line = PLACEHOLDER
        self.lines.append(line)
        self.size += len(line) + 1


def line_literals(pattern: str) -> dict[str, int] | None:
    """Lowercased texts such that any line a match of the pattern touches holds one of them, or lies within the
    text's number of lines (WINDOW where the pattern goes on past a line end, `\\s*\\n`), or is crossed only by
    parts of the pattern that would cross PLACEHOLDER alike (`.*` in DOTALL); None if it names no text."""
    try:
        parsed = sre.parse(pattern)
    except re.error:
        return None
    dotall = bool(parsed.state.flags & re.DOTALL) or "(?s" in pattern
    found = _literals(list(parsed), dotall)
    return found or None


def _literals(items: list, dotall: bool) -> dict[str, int]:
    """The texts of a sequence of parsed items: in each stretch of it that cannot cross a line end, its longest
    run of literal text (that line must hold it), else what its groups and alternatives hold; and what an
    optional part that crosses lines holds."""
    out: dict[str, int] = {}
    segment: list = []

    def add(found, reach=0):
        for t in found:
            out[t] = max(out.get(t, 0), found[t] if isinstance(found, dict) else 0, reach)

    for item in items + [None]:
        if item is None or _crosses(item, dotall):
            runs, cur = [], {""}  # each run: the texts one of which the line holds ("Converte? (?:Onnx|Tensorflow)")
            for i in segment:
                texts = _texts(i)
                if texts is not None and len(cur) * len(texts) <= MAX_TEXTS:
                    cur = {a + b for a in cur for b in texts}
                    continue
                runs.append(cur)
                cur = {""}
            runs.append(cur)
            best = max(runs, key=lambda r: min(len(t.strip()) for t in r))
            reach = WINDOW if any(_line_end(i) for i in segment) else 0
            if min(len(t.strip()) for t in best) >= MIN_LITERAL:
                add({t.lower() for t in best}, reach)
            else:
                for i in segment:
                    add(_nested(i, dotall), reach)
            if item is not None:
                add(_nested(item, dotall))
                add(_optional(item, dotall))
            segment = []
        else:
            segment.append(item)
    return {t: r for t, r in out.items() if len(t.strip()) >= MIN_LITERAL}


def _texts(item) -> set[str] | None:
    """The texts an item of fixed text matches (a literal, [Qq], an alternation of literals, an optional
    letter); None for anything else."""
    op, av = item
    if op is sre.LITERAL:
        return {chr(av)}
    if op is sre.IN and all(o is sre.LITERAL for o, _ in av):
        return {chr(a) for _, a in av}
    if op is sre.SUBPATTERN:
        return _sequence(av[-1])
    if op is sre.BRANCH:
        each = [_sequence(b) for b in av[1]]
        return None if any(e is None for e in each) or sum(map(len, each)) > MAX_TEXTS else set().union(*each)
    if op in _REPEATS and (av[0], av[1]) == (0, 1):
        inner = _sequence(av[2])
        return None if inner is None else inner | {""}
    return None


def _sequence(items) -> set[str] | None:
    out = {""}
    for i in items:
        texts = _texts(i)
        if texts is None or len(out) * len(texts) > MAX_TEXTS:
            return None
        out = {a + b for a in out for b in texts}
    return out


MAX_TEXTS = 32


def _nested(item, dotall: bool) -> dict[str, int]:
    op, av = item
    if op is sre.SUBPATTERN:
        return _literals(list(av[-1]), dotall or bool(av[1] & re.DOTALL))
    if op is sre.BRANCH:
        each = [_literals(list(b), dotall) for b in av[1]]
        return {t: r for e in each for t, r in e.items()} if all(each) else {}  # an alternative without text: nothing
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return _literals(list(av[1]), dotall)
    if op in _REPEATS and av[0] > 0:
        return _literals(list(av[2]), dotall)
    return {}


def _optional(item, dotall: bool) -> dict[str, int]:
    op, av = item
    if op in _REPEATS and av[0] == 0:
        return _literals(list(av[2]), dotall)
    if op is sre.SUBPATTERN:
        return {t: r for i in av[-1] for t, r in _optional(i, dotall).items()}
    return {}


def _line_end(item) -> bool:
    """Whether an item can match a line end (`\\n`, `\\s`, `[^)]`): the pattern goes on onto another line."""
    op, av = item
    if op is sre.LITERAL:
        return av == 10
    if op in (sre.IN, sre.NOT_LITERAL, sre.CATEGORY):
        return bool(_compiler.compile(sre.SubPattern(sre.State(), [item]), 0).fullmatch("\n"))
    if op in (sre.SUBPATTERN, sre.ATOMIC_GROUP):
        return any(_line_end(i) for i in av[-1])
    if op is sre.BRANCH:
        return any(_line_end(i) for b in av[1] for i in b)
    if op in _REPEATS:
        return any(_line_end(i) for i in av[2])
    return False


def _crosses(item, dotall: bool) -> bool:
    """Whether a parsed item can match across a line that is not blank: `.` in DOTALL, `[^)]`, `\\D`, `[\\s\\S]`.
    A line end or whitespace (`\\s*\\n\\s*`) crosses only blank lines, which Kept keeps: what follows it is on
    the next line that is not blank, held by the line before it or within WINDOW of it."""
    op, av = item
    if op is sre.LITERAL:
        return False
    if op is sre.ANY:
        return dotall
    if op in (sre.IN, sre.NOT_LITERAL, sre.CATEGORY):  # a class: one that takes a line end and a line's text
        rx = _compiler.compile(sre.SubPattern(sre.State(), [item]), 0)
        return bool(rx.fullmatch("\n")) and any(rx.fullmatch(c) for c in "a0_" + PLACEHOLDER)
    if op in (sre.SUBPATTERN, sre.ATOMIC_GROUP):
        sub = dotall or (op is sre.SUBPATTERN and bool(av[1] & re.DOTALL))
        return any(_crosses(i, sub) for i in av[-1])
    if op is sre.BRANCH:
        return any(_crosses(i, dotall) for b in av[1] for i in b)
    if op in _REPEATS:
        return any(_crosses(i, dotall) for i in av[2])
    if op in (sre.ASSERT, sre.ASSERT_NOT):  # a lookaround that looks across lines: its texts count
        return any(_crosses(i, dotall) for i in av[1])
    return op is not sre.AT  # a backreference or anything else: assume it may


_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", sre.MAX_REPEAT))


def clean(lines: list[str]) -> list[str]:
    """Without colours and control characters (kb.match.noise), trimmed; in one pass over all the lines."""
    return [line.strip() for line in noise.clean("\n".join(lines)).split("\n")]


def _binary(head: bytes) -> bool:
    """NUL bytes, or mostly bytes that are neither text nor UTF-8, mean it is not a log."""
    if b"\x00" in head:
        return True
    odd = sum(b < 32 and b not in b"\t\n\r\f\x1b" for b in head)
    invalid = head.decode("utf-8", errors="replace").count("\ufffd")
    return bool(head) and (odd + invalid) > 0.1 * len(head)
