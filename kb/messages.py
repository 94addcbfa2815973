"""The message index: one file per engine message, repros/_messages/<id>.yaml (schema: kb.schema.Message).

A message such as MNN's `Broad cast error, dim1 = ..., dim2 = ...` is printed for many causes. Its file
lists the upstream causes that are not entries; the entries that show it cite it from a signature
(`message: <id>`), and `cited_by` gives them back. Bad input is one KBError naming the file and field.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import ValidationError

from kb import yamlio
from kb.entries import Entry
from kb.errors import KBError
from kb.paths import repo_root
from kb.schema import Message, Signature

FOLDER = "_messages"  # under repros/: load_all skips folders starting with '_'


def folder(root: Path | None = None) -> Path:
    return (root or repo_root()) / "repros" / FOLDER


def load(path: Path) -> Message:
    return _load(path, path.read_text(encoding="utf-8"))


@lru_cache(maxsize=1024)
def _load(path: Path, text: str) -> Message:
    """Kept by the file's text: kb explain reads every message on each call (tests and benches call it hundreds of
    times in one process)."""
    try:
        data = yamlio.load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise KBError(path, f"not valid YAML{where}: {getattr(e, 'problem', e)}") from None
    if not isinstance(data, dict):
        raise KBError(path, "must be a mapping")
    try:
        msg = Message.model_validate(data)
    except ValidationError as e:
        raise KBError.invalid(path, e) from None
    if msg.id != path.stem:
        raise KBError(path, f"field 'id': {msg.id!r} differs from the file name {path.stem!r}")
    return msg


def load_all(root: Path | None = None, entries: list[Entry] | None = None) -> dict[str, Message]:
    """Every message by id. With `entries`, also check that each message an entry cites exists.
    A corpus without repros/_messages/ has no index: its entries' citations are then not checked,
    and `kb explain` counts every message they cite as generic."""
    base = folder(root)
    if not base.is_dir():
        return {}
    found = {p.stem: load(p) for p in sorted(base.glob("*.yaml"))}
    for e in entries or []:
        for i, s in enumerate(e.meta.signatures):
            if s.message and s.message not in found:
                raise KBError(e.page, f"field 'signatures.{i}.message': no message {s.message!r} in "
                                      f"repros/{FOLDER}/")
            # a line the index knows is that message's instance: uncited, one cause's evidence would read as proof
            # (a message of the entry's engines: pnnx's "... is not supported yet!" is not onnx2ncnn's line)
            known = [m.id for m in found.values() if s.kind == "log" and s.example and
                     set(m.engines) & set(e.meta.engines) and re.search(m.pattern, s.example)]
            if known and s.message not in known:
                raise KBError(e.page, f"field 'signatures.{i}.message': the example is the line of message "
                                      f"{known[0]!r} (repros/{FOLDER}/{known[0]}.yaml): cite it")
    return found


def cited_by(message_id: str, entries: list[Entry]) -> list[tuple[Entry, Signature]]:
    """The entries (and their signatures) that cite the message, in corpus order."""
    return [(e, s) for e in entries for s in e.meta.signatures if s.message == message_id]


def named_ops(msg: Message, line: str) -> list[str]:
    """The ops a line of the message says its engine lacks (`unsupported_op`'s group 1 at each match), each once;
    none in a line that is not the message's."""
    if not msg.unsupported_op or not re.search(msg.pattern, line):
        return []
    return list(dict.fromkeys(m[1] for m in re.finditer(msg.unsupported_op, line) if m[1]))


@lru_cache(maxsize=4096)
def defined_op(op: str) -> bool:
    """Whether ONNX, or onnxruntime's contrib domains, define the op: then it is no custom op."""
    import onnx.defs

    if onnx.defs.has(op):
        return True
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as ort
    except ImportError:
        return False
    return op in _ort_ops(ort)


@lru_cache(maxsize=1)
def _ort_ops(ort) -> frozenset[str]:
    return frozenset(s.name for s in ort.get_all_operator_schema())
