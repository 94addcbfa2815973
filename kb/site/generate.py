"""Gather the corpus (entries, checks, accepted expectations, records) and write the site's pages."""

from __future__ import annotations

import logging
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from kb import paths
from kb.engines import ENGINES
from kb.entries import Entry, load_all, repo_root
from kb.errors import KBError
from kb.match.words import teach_segmenter
from kb.records import Record, RecordStore
from kb.schema import SLUG
from kb.site import pages
from kb.status import EntryStatus, of_entry

log = logging.getLogger("mkdocs.kb")
HOME = "index.md"


def records_dir(root: Path) -> Path:
    """Where the records are, as `kb check` writes them."""
    return paths.state("records", root)


@dataclass
class Site:
    """The generated pages (file name -> Markdown) and what mkdocs needs besides them."""

    pages: dict[str, str] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)  # former slug -> slug
    # the entries by the engine each names first ("MNN": [(title, file name)...]), a nav section each after Home: a
    # page renders its own section's entries, not all of them (navigation.prune)
    entry_nav: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    statuses: dict[str, EntryStatus] = field(default_factory=dict)  # slug -> status
    message_nav: list[tuple[str, str]] = field(default_factory=list)  # (title, file name): the "Messages" section
    op_nav: list[tuple[str, str]] = field(default_factory=list)  # (title, file name): the "ONNX ops" section
    # The search box's scripts (asset path -> text), written out from kb explain's own rules: pasted noise,
    # the pages a line names, the words' ranking.
    scripts: dict[str, str] = field(default_factory=dict)


def render(root: Path | None = None, records: Path | None = None, entries: list[Entry] | None = None) -> Site:
    root = root or repo_root()
    entries = load_all(root) if entries is None else entries
    all_records, problems = RecordStore(records or records_dir(root)).read()
    for p in problems:  # a torn last line of a killed run is expected, so not a warning
        log.info("kb: %s", p)
    by_entry: dict[str, list[Record]] = {}
    for r in all_records:
        by_entry.setdefault(r.entry, []).append(r)

    from kb import messages as message_index

    known = message_index.load_all(root, entries)
    # Before any page: material's search cuts the pages' Chinese with jieba at build, in this process, as
    # kb explain cuts reports; both must know the synonyms' words.
    teach_segmenter(entries, known.values())
    from kb.site import ops

    conf = ops.Conformance.load(root)  # conformance/*.yaml: the op pages, and the entries' links to them
    op_names = frozenset(conf.ops()) if conf.tables else frozenset()
    site = Site()
    rows: list[tuple[Entry, EntryStatus]] = []
    for e in entries:
        st = of_entry(e, by_entry.get(e.slug, []))
        site.pages[f"{e.slug}.md"] = pages.entry_page(e, st, known, op_names)
        site.statuses[e.slug] = st
        site.entry_nav.setdefault(ENGINES[e.meta.engines[0]].shown, []).append(
            (f"{e.meta.id} · {e.meta.title}", f"{e.slug}.md"))
        rows.append((e, st))
    site.pages[HOME] = pages.home_page(rows)
    _message_pages(site, known, entries, conf.tables)
    op_pages, site.op_nav = ops.pages(root, entries, conf)  # /ops/<Op>/ from conformance/*.yaml
    site.pages.update(op_pages)
    site.scripts = _scripts(entries, known, ops.search_pages(conf) if conf.tables else {})
    site.entry_nav = {k: sorted(v) for k, v in sorted(site.entry_nav.items(), key=lambda kv: kv[0].casefold())}
    site.redirects = _redirects(entries)
    return site


def _message_pages(site: Site, known: dict, entries: list[Entry], tables: dict) -> None:
    """One page per message of the index (repros/_messages/), at /messages/<id>/."""
    from kb.site import messages as message_pages

    for m in known.values():
        name = message_pages.page_name(m.id)
        site.pages[name] = message_pages.message_page(m, entries, site.statuses, tables)
        site.message_nav.append((m.shown, name))


def _scripts(entries: list[Entry], known: dict, op_pages: dict[str, list[str]] | None = None) -> dict[str, str]:
    """The data of the search box's scripts (docs/assets/kb-noise.js, kb-lines.js, kb-words.js), from kb explain's
    own rules: one generated file, named in mkdocs.yml's extra_javascript before them. `op_pages`: op -> engines
    (kb.site.ops.search_pages), found by the op's name."""
    from kb.match import noise
    from kb.match.lines import Table
    from kb.match.words import SiteIndex

    data = {"noise": noise.data(),  # what a pasted line carries besides its message
            "lines": Table.build(entries, known).data(),  # the pages a line names by itself
            "words": SiteIndex(entries, known, op_pages).data()}  # the pages the query's words rank first
    return {"assets/kb-data.js": "/* Generated at site build from kb/match (noise.py, lines.py, words.py). */\n"
                                 f"window.kbData = {json.dumps(data, ensure_ascii=False, separators=(',', ':'))};\n"}


def _redirects(entries: list[Entry]) -> dict[str, str]:
    slugs = {e.slug for e in entries}
    out: dict[str, str] = {}
    for e in entries:
        for old in e.meta.aliases:
            if not re.match(SLUG, old):
                raise KBError(e.page, f"field 'aliases': {old!r} is not a slug, so it was never an address")
            if old in slugs or old in out or old == "index":
                raise KBError(e.page, f"field 'aliases': {old!r} is already the address of another page")
            out[old] = e.slug
    return out


def write(site: Site, out_docs_dir: Path) -> list[Path]:
    """Write the pages, touching only files whose text changed (a rewrite would wake `mkdocs serve`
    again), and remove pages of entries that no longer exist."""
    out_docs_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in site.pages.items():
        path = out_docs_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            tmp = path.with_suffix(f".tmp-{os.getpid()}")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        written.append(path)
    for stale in (*out_docs_dir.glob("*.md"), *out_docs_dir.glob("messages/*.md"), *out_docs_dir.glob("ops/*.md")):
        if stale.relative_to(out_docs_dir).as_posix() not in site.pages:
            stale.unlink()
    return written


def build(out_docs_dir: Path, root: Path | None = None, records: Path | None = None) -> Site:
    """Generate the Markdown pages of every entry and the home page into `out_docs_dir`."""
    site = render(root, records)
    write(site, Path(out_docs_dir))
    return site
