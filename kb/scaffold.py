"""`kb new SLUG --engine E`: a new entry folder, from the templates in kb/templates/entry/."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import jinja2

from kb.engines import ENGINES
from kb.entries import PAGE, REPRO
from kb.errors import KBError
from kb.pipelines import PIPELINES
from kb.paths import repo_root
from kb.schema import SLUG

TEMPLATES = Path(__file__).parent / "templates" / "entry"
# The pipeline (kb.pipelines) a first check of each engine usually runs.
PIPELINE = {"mnn": "mnn", "ncnn": "pnnx", "pnnx": "pnnx", "onnx2ncnn": "onnx2ncnn", "onnxruntime": "onnxruntime"}
STEP = {"mnn": "mnnconvert", "ncnn": "ncnn", "pnnx": "pnnx", "onnx2ncnn": "onnx2ncnn", "onnxruntime": "onnxruntime"}


def used_ids(root: Path) -> list[int]:
    """Every page's `id:` line: an entry still being written must not stop another."""
    return [int(m[1]) for page in (root / "repros").glob(f"*/{PAGE}")
            if (m := re.search(r"^id: KB(\d{3})\b", page.read_text(encoding="utf-8"), re.MULTILINE))]


def next_id(root: Path) -> str:
    return f"KB{max(used_ids(root), default=0) + 1:03d}"


def new_entry(slug: str, engine: str, root: Path | None = None, id: str | None = None) -> Path:
    """`id`: one handed out (several people writing entries at once); default: the next free one."""
    root = root or repo_root()
    folder = root / "repros" / slug
    if not re.match(SLUG, slug):
        raise KBError(folder, "not a valid slug: lowercase words joined by '-', e.g. mnn-einsum-three-operands")
    if engine not in ENGINES:
        raise KBError("--engine", f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    if folder.exists():
        raise KBError(folder, "already exists")
    if id is not None and not re.fullmatch(r"KB\d{3}", id):
        raise KBError("--id", f"{id!r} is not an entry id: KB and three digits, e.g. KB135")
    if id is not None and int(id[2:]) in used_ids(root):
        raise KBError("--id", f"{id} is already the id of another entry (kb list)")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    values = {"slug": slug, "id": id or next_id(root), "engine": engine, "engines": ", ".join(ENGINES),
              "today": date.today().isoformat(), "step": STEP[engine], "pipeline": PIPELINE[engine],
              "pipelines": PIPELINES}
    folder.mkdir(parents=True)
    for name in (PAGE, REPRO):  # checks are rows of the page; test_checks.py only for a check of several steps
        (folder / name).write_text(env.get_template(f"{name}.j2").render(values), encoding="utf-8")
    return folder
