"""Find and load the corpus entries in repros/<slug>/."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from kb import paths, yamlio
from kb.errors import KBError
from kb.paths import repo_root
from kb.schema import SLUG, EntryMeta

PAGE = "README.md"  # the page, with the front matter
REPRO = "repro.py"  # the minimal torch reproducer
TEST = "test_checks.py"  # checks that are functions (the rest are rows of the front matter)
EXPECTED = "expected.yaml"  # accepted observations, written by `kb accept`


@dataclass(frozen=True)
class Entry:
    slug: str
    dir: Path
    meta: EntryMeta
    body: str

    @property
    def page(self) -> Path:
        return self.dir / PAGE

    @property
    def repro(self) -> Path:
        return self.dir / REPRO

    @property
    def test(self) -> Path:
        return self.dir / TEST

    @property
    def expected(self) -> Path:
        return self.dir / EXPECTED


def split_front_matter(text: str, path: Path) -> tuple[dict, str]:
    if not text.startswith("---\n"):
        raise KBError(path, "the page must start with a '---' front matter block")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise KBError(path, "the front matter block is not closed by '---'")
    try:
        data = yamlio.load(text[4:end])
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark else ""
        raise KBError(path, f"front matter is not valid YAML{where}: {getattr(e, 'problem', e)}") from None
    if not isinstance(data, dict):
        raise KBError(path, "front matter must be a mapping")
    return data, text[end + 5:]


def placeholders(data, at: str = "") -> list[str]:
    """The fields of the front matter still holding the template's TODO."""
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in placeholders(v, f"{at}.{k}" if at else str(k))]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in placeholders(v, f"{at}.{i}")]
    return [at] if isinstance(data, str) and "TODO" in data else []


@functools.cache
def _schema_code() -> bytes:
    """The code a page is validated by (pipelines.py: a row's options): a change to it invalidates every cached
    parse."""
    here = Path(__file__).parent
    return b"".join((here / n).read_bytes() for n in ("schema.py", "pipelines.py", "pattern.py", "tags.py",
                                                      "verdicts.py", "engines/__init__.py", "entries.py"))


def _parsed(page: Path) -> tuple[EntryMeta, str]:
    """The page's validated front matter and its body. A page that validated once is kept, keyed by its text
    and the schema's code, in the cache: `kb scan` and `kb explain` load every entry on each run."""
    text = page.read_text(encoding="utf-8")
    key = hashlib.sha256(_schema_code() + text.encode()).hexdigest()[:32]
    kept = paths.state("cache") / "entries" / f"{key}.pickle"
    try:
        return pickle.loads(kept.read_bytes())
    except Exception:  # absent, torn or from another pydantic: parse again
        pass
    data, body = split_front_matter(text, page)
    todo = placeholders(data)
    if todo:
        raise KBError(page, f"still to fill in (the template's TODOs): {', '.join(todo)}")
    if "TODO" in body:
        raise KBError(page, "still to fill in: the page's text has TODOs")
    try:
        meta = EntryMeta.model_validate(data)
    except ValidationError as e:
        raise KBError.invalid(page, e) from None
    write_whole(kept, pickle.dumps((meta, body)))
    return meta, body


def write_whole(path: Path, data: bytes) -> None:
    """A cache file, written whole or not at all (a parallel run may read it); a read-only cache only costs time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as f:
            f.write(data)
        os.replace(f.name, path)
    except OSError:
        pass


def load_entry(folder: Path) -> Entry:
    slug = folder.name
    page = folder / PAGE
    if not page.is_file():
        raise KBError(page, "missing: every entry needs its page")
    import re

    if not re.match(SLUG, slug):
        raise KBError(folder, "folder name is not a valid slug (lowercase words joined by '-')")
    meta, body = _parsed(page)
    if not (folder / REPRO).is_file():
        raise KBError(folder / REPRO, "missing: every entry needs a reproducer")
    return Entry(slug, folder, meta, body)


def load_all(root: Path | None = None, broken: list[KBError] | None = None) -> list[Entry]:
    """Every entry. Given a `broken` list, an entry that does not load goes there instead of raising: one
    half-written entry must not take the others' contracts (or `kb list`) down with it."""
    base = (root or repo_root()) / "repros"
    entries, ids = [], {}
    for d in sorted(base.iterdir()):
        if not d.is_dir() or d.name.startswith((".", "_")):
            continue
        try:
            e = load_entry(d)
            if e.meta.id in ids:
                raise KBError(e.page, f"field 'id': {e.meta.id} is already used by {ids[e.meta.id]}")
        except KBError as problem:
            if broken is None:
                raise
            broken.append(problem)
            continue
        ids[e.meta.id] = e.slug
        entries.append(e)
    return entries


def find(slug: str, root: Path | None = None) -> Entry:
    folder = (root or repo_root()) / "repros" / slug
    if not folder.is_dir():
        raise KBError(folder, "no such entry")
    return load_entry(folder)
