"""An engine's output as kb reads it: which line says what went wrong, and what in a line changes from one
run to the next. One definition for a check's fingerprint (kb.judge), `kb locate`'s "fails the same way",
`kb explain` and bench/arch's labels. Light on purpose: `kb explain` imports it at start-up."""

from __future__ import annotations

import re

# A line that reads like an error. Changing it changes which line a recorded fingerprint quotes.
ERRORISH = re.compile(r"error|not support|exception|fail|abort|segmentation|can't|cannot|not exist|nan\b",
                      re.IGNORECASE)

# What differs between two runs that fail the same way.
VOLATILE = [
    (re.compile(r"\x1b\[[0-9;]*m"), ""),  # ANSI colours
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\s*"), ""),  # onnxruntime's timestamps (in pnnx)
    (re.compile(r"\[\d\d:\d\d:\d\d\]\s*(:\d+:)?\s*"), ""),  # MNN's timestamps
    (re.compile(r"^\S+\.(?:cpp|cc|hpp|h):\d+:?\s*"), ""),  # a source line the message starts with
    (re.compile(r"^:\d+:\s*"), ""),
    (re.compile(r"(/[\w.+-]+)+/"), ""),  # directories
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s|sec|seconds)\b"), "<time>"),
]


def error_line(output: str, *, last: bool = False) -> str:
    """The first (or last) line that reads like an error, else the last line; "" for no output."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ERRORISH.search(ln)]
    line = (errors[-1] if last else errors[0]) if errors else (lines[-1] if lines else "")
    return line[:300]


def steady(line: str) -> str:
    """`line` without what changes between runs."""
    for rx, sub in VOLATILE:
        line = rx.sub(sub, line)
    return line.strip()
