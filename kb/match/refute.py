"""What a log refutes: a generic message names a value (the op, the layer, a count, a mode), and an entry
whose signatures cannot have that value there is ruled out before any hint is shown."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from kb import messages as message_index
from kb.entries import Entry
from kb.schema import Message, Signature

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
