"""What a pasted log line carries besides its message: colours, control characters, timestamps, addresses,
folders, file names and command options. Defined once, here, for every reader of pasted text:

    clean(text)   a log's text without colours and control characters (kb.match.logfile)
    query(text)   the words worth searching for (kb explain's search link)
    data()        the same QUERY rules for the browser (docs/assets/kb-noise.js, the site's search box)

Each pattern is written in the part of regex syntax that Python's `re` (compiled ASCII-only) and
JavaScript read alike: explicit ASCII classes, fixed-width lookbehinds, no named groups, flags `i` at
most. tests/test_site_browser.py runs both on the same lines and compares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

_WS = r" \t\n\r\f\v"  # whitespace as both Python (ASCII) and JavaScript read `\s` in ASCII text
_NAME = rf"[^{_WS}/\\]"  # a character of a path component
_START = rf"(?<![^{_WS}])"  # at the start of the text or of a word
# Files people paste the names of: models, their weights, images, logs, sources, libraries (not
# programs: MNNConvert.exe names the tool).
_EXT = (r"onnx|param|bin|mnn|ncnn|pt|pth|pb|pbtxt|tflite|torchscript|prototxt|caffemodel|safetensors|"
        r"jpe?g|png|bmp|txt|json|ya?ml|log|cpp|cc|cxx|c|hpp|h|py|so|dll|dylib")


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: str
    replace: str = " "
    flags: str = ""  # "i": ignore case

    @cached_property
    def regex(self) -> re.Pattern:
        return re.compile(self.pattern, re.ASCII | (re.IGNORECASE if "i" in self.flags else 0))


# CSI (colours, cursor moves), OSC (titles, links) and two-byte escapes; then other control characters
# (tab and line feed stay: they separate words).
ANSI = Rule("ansi", r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]", "")
CONTROL = Rule("control", r"[\x00-\x08\x0b-\x1f\x7f]", "")
CLEAN = (ANSI, CONTROL)

QUERY = CLEAN + (
    # Dates and clock times, with their brackets and fractions: [2024-05-01 10:22:33.123], [10:22:33].
    Rule("timestamp", r"\[?[0-9]{1,4}[-:/][0-9]{1,2}[-:/][0-9]{1,4}(?:[ T.,:]?[0-9]+)*\]?"),
    Rule("address", r"\b0x[0-9a-f]{4,}\b", flags="i"),
    # The folders of a path (/home/me/x, ./onnx2ncnn, ..\bin\MNNConvert.exe, C:\models\x): the last part
    # stays, for it may be the tool. A word with one inner slash (lstm_1/while, NCHW/NHWC) is no path.
    Rule("folders", rf"{_START}(?:(?:[A-Za-z]:|\.{{1,2}}|~)?[/\\]|{_NAME}+[/\\](?={_NAME}+[/\\]))"
                    rf"(?:{_NAME}+[/\\])*(?={_NAME})", ""),
    # A file's name (yolov5s-sim.onnx, model.param, converter.cpp:98:) names the user's files, not the problem.
    Rule("file", rf"{_START}{_NAME}*\.(?:{_EXT})(?::[0-9]+)*[:)\]'\",;.]*(?![^{_WS}])", flags="i"),
    # A command's options (--modelFile, -f, --fp16=1): how the user ran the tool, not what went wrong.
    Rule("option", rf"{_START}--?[A-Za-z][A-Za-z0-9_-]*(?:=[^{_WS}]*)?"),
)
# Numbers stay: dropping them cost the search more than it gained (opset 14, 5-D, error codes), measured
# on the browser test's cases; the search box searches a trailing number whole instead of as a prefix.


def _apply(rules: tuple[Rule, ...], text: str) -> str:
    for r in rules:
        text = r.regex.sub(r.replace, text)
    return text


def clean(text: str) -> str:
    """Without colours and control characters."""
    return _apply(CLEAN, text)


def query(text: str) -> str:
    """The words of pasted text worth searching for, one space apart ("" if none are)."""
    return " ".join(_apply(QUERY, text).split())


def data() -> list[dict]:
    """query()'s rules for the browser: docs/assets/kb-noise.js applies them as query() does."""
    return [{"name": r.name, "source": r.pattern, "flags": "g" + r.flags, "replace": r.replace} for r in QUERY]
