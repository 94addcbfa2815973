"""Read a user's model file for scanning, or say in one line what is wrong with it.

ONNX is read without its external data (patterns need no weights), but external data files the
model names must be there: a model that lacks them will not convert either, so that is reported.
"""

from __future__ import annotations

import tempfile
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from kb.errors import KBError
from kb.match import codes
from kb.match.paths import input_file

if TYPE_CHECKING:
    import onnx

MAX_PROTOBUF = 2**31 - 1  # protobuf cannot parse one message of 2 GiB or more
EXPORT_TIMEOUT = 600.0  # seconds for exporting a torch.export program in a child
# What a file that is not ONNX most likely is, by its first bytes.
MAGIC = [
    (b"\x1f\x8b", "gzip-compressed data; decompress it first"),
    (b"\x7fELF", "an executable or shared library"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"%PDF", "a PDF document"),
    (b"7767517", "an ncnn .param file; scan the ONNX model it was converted from"),
]


@dataclass
class Loaded:
    model: onnx.ModelProto
    path: Path
    note: str = ""  # how the ONNX graph was obtained, when the file is not ONNX itself


def load(path: str | Path) -> Loaded:
    p, size = input_file(path)
    with p.open("rb") as f:  # one pass: a pipe can be read only once
        head = f.read(4096)
        if not head:
            raise KBError(p, "is empty, not a model", codes.NOT_A_MODEL)
        if head.startswith(b"PK\x03\x04"):
            return _archive(p)
        if size is not None and size > MAX_PROTOBUF:
            raise KBError(p, f"is {size / 2**30:.1f} GiB, beyond protobuf's 2 GiB limit; save the model with "
                             "external data (onnx.save(model, path, save_as_external_data=True))",
                          codes.MODEL_TOO_LARGE)
        data = head + f.read(MAX_PROTOBUF + 1 - len(head))
    if len(data) > MAX_PROTOBUF:
        raise KBError(p, "is 2 GiB or more, beyond protobuf's limit", codes.MODEL_TOO_LARGE)
    model = _parse(p, data)
    _check_external_data(model, p)
    return Loaded(model, p)


def _parse(p: Path, data: bytes) -> onnx.ModelProto:
    import onnx
    from google.protobuf.message import DecodeError

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
        problem = ("it has no graph" if not model.HasField("graph") or not model.ir_version
                   else "it has no opset_import" if not model.opset_import else None)
    except (DecodeError, RuntimeError, ValueError) as e:
        problem = f"protobuf cannot parse it ({e})"
    if problem is None:
        return model
    if _onnx_header(data):
        raise KBError(p, f"is a truncated or corrupt ONNX file: {problem}", codes.CORRUPT_MODEL)
    raise KBError(p, f"is not an ONNX model: {_describe(data[:4096])}", codes.NOT_A_MODEL)


def _onnx_header(head: bytes) -> bool:
    # Every ONNX writer serializes ModelProto's field 1 (ir_version, a small varint) first: tag 0x08.
    return len(head) >= 2 and head[0] == 0x08 and 1 <= head[1] <= 64


def _describe(head: bytes) -> str:
    for magic, what in MAGIC:
        if head.startswith(magic):
            return what
    sample = head[:1024]
    text = sum(32 <= b < 127 or b in b"\t\r\n" for b in sample)
    if text >= 0.95 * len(sample):
        return "it is a text file (a log? try `kb explain`)"
    return "unrecognised binary data"


def _archive(p: Path) -> Loaded:
    """A zip archive: a torch.export program is exported to ONNX; other torch files are explained."""
    try:
        with zipfile.ZipFile(p) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError) as e:
        raise KBError(p, f"is a truncated or corrupt zip archive: {e}", codes.CORRUPT_MODEL) from None
    export_onnx = ("export it with torch.onnx.export(model, example_inputs, 'model.onnx', dynamo=False) "
                   "and scan the .onnx file")
    if any(n.endswith(("/models/model.json", "serialized_exported_program.json")) for n in names):
        return _from_program(p)
    if any(n.endswith("/constants.pkl") for n in names) and any("/code/" in n for n in names):
        raise KBError(p, "is TorchScript, which keeps no input shapes to export it with; " + export_onnx,
                      codes.CANNOT_SCAN)
    if any(n.endswith("data.pkl") for n in names):
        raise KBError(p, "is a torch.save checkpoint: weights without a graph; " + export_onnx, codes.CANNOT_SCAN)
    raise KBError(p, "is not a model: a zip archive of something else", codes.NOT_A_MODEL)


def _from_program(p: Path) -> Loaded:
    from kb.child import run_function

    with tempfile.TemporaryDirectory(prefix="kb-scan-") as tmp:
        out = Path(tmp) / f"{p.stem}.onnx"
        step = run_function("torch.export program to ONNX", "kb.match.torch_program:to_onnx",
                            timeout=EXPORT_TIMEOUT, program=str(p.resolve()), out=str(out))
        if not step.ok or not out.is_file():
            last = ([ln.strip() for ln in step.output.splitlines() if ln.strip()] or ["no output"])[-1]
            raise KBError(p, f"is a torch.export program, but exporting it to ONNX failed ({step.fate()}): "
                             f"{last[:300]}", codes.CANNOT_SCAN)
        model = load(out).model  # checked like any ONNX file, while its external data still exists
    return Loaded(model, p, "a torch.export program, exported with torch.onnx.export(program) (dynamo, default options)")


def _check_external_data(model: onnx.ModelProto, p: Path) -> None:
    import onnx

    # Bytes each external file must hold, and the tensors stored in it.
    needed: dict[str, int] = defaultdict(int)
    tensors: dict[str, list[str]] = defaultdict(list)
    for t in _tensors(model.graph):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        loc = info.get("location", "")
        if not loc:
            raise KBError(p, f"tensor {t.name!r} is stored as external data but names no file", codes.CORRUPT_MODEL)
        end = int(info.get("offset") or 0) + int(info.get("length") or 0)
        needed[loc] = max(needed[loc], end)
        tensors[loc].append(t.name)
    missing = [loc for loc in needed if not (p.parent / loc).is_file()]
    if missing:
        loc = missing[0]
        more = f" (and {len(missing) - 1} other external data files)" if len(missing) > 1 else ""
        raise KBError(p, f"external data file {loc!r} is missing{more}: it holds {len(tensors[loc])} tensors, "
                         f"e.g. {tensors[loc][0]!r}; keep it next to the model", codes.EXTERNAL_DATA_MISSING)
    for loc, end in needed.items():
        size = (p.parent / loc).stat().st_size
        if size < end:
            raise KBError(p, f"external data file {loc!r} is truncated: {size} bytes, the model reads up to {end}",
                          codes.EXTERNAL_DATA_MISSING)


def _tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """Every tensor stored in the model: initializers and constant attributes, in every subgraph."""
    import onnx

    A = onnx.AttributeProto
    stack = [graph]
    while stack:
        g = stack.pop()
        yield from g.initializer
        for s in g.sparse_initializer:
            yield from (s.values, s.indices)
        for n in g.node:
            for a in n.attribute:
                if a.type == A.TENSOR:
                    yield a.t
                elif a.type == A.TENSORS:
                    yield from a.tensors
                elif a.type == A.SPARSE_TENSOR:
                    yield from (a.sparse_tensor.values, a.sparse_tensor.indices)
                elif a.type == A.GRAPH:
                    stack.append(a.g)
                elif a.type == A.GRAPHS:
                    stack.extend(a.graphs)
