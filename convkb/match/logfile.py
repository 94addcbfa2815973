"""Read a log as clean lines, in blocks, bounded: at most MAX_BYTES, no line longer than MAX_LINE.

Real logs come with ANSI colours, CRLF or bare-CR line ends (progress bars), UTF-16 from PowerShell,
and sometimes are not logs at all; each of those is handled here, so matching sees plain text lines.
"""

from __future__ import annotations

import codecs
import re
import sys
from pathlib import Path
from typing import BinaryIO, Iterator

from convkb.errors import KBError
from convkb.match import codes, noise
from convkb.match.paths import input_file

MAX_BYTES = 64 * 2**20  # a larger log is refused: the part around the error is what matters
MAX_LINE = 16 * 2**10  # characters kept of one line; the rest of it is skipped
CHUNK = 2**16
HEAD = 8192  # bytes looked at to tell text from binary
STDIN = "<stdin>"

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


def clean(lines: list[str]) -> list[str]:
    """Without colours and control characters (convkb.match.noise), trimmed; in one pass over all the lines."""
    return [line.strip() for line in noise.clean("\n".join(lines)).split("\n")]


def _binary(head: bytes) -> bool:
    """NUL bytes, or mostly bytes that are neither text nor UTF-8, mean it is not a log."""
    if b"\x00" in head:
        return True
    odd = sum(b < 32 and b not in b"\t\n\r\f\x1b" for b in head)
    invalid = head.decode("utf-8", errors="replace").count("\ufffd")
    return bool(head) and (odd + invalid) > 0.1 * len(head)
