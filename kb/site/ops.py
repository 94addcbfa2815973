"""The op pages, /ops/<Op>/: how onnx's node-test cases of one op fared on each engine path and release
(the conformance ledgers, conformance/<engine>.yaml, written by `kb conform --accept`), and the index /ops/.
torch's ops (F.pad, torch.roll) have pages too, from torch's own op samples on the pnnx-torch path.

A page groups the op's cases by the node's attributes (conformance/cases.yaml, torch-cases.yaml), says per
engine and release how many work and how the others fail (the converter's or runtime's own message line), and
links the entries whose trigger names the op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kb import conformance
from kb.conformance import Table
from kb.engines import ENGINES
from kb.entries import Entry
from kb.opfigures import failures
from kb.site.markup import env
from kb.verdicts import Outcome
from kb.versions import version_key

FOLDER = "ops"
TEMPLATE = "op.md.j2"
INDEX_TEMPLATE = "ops.md.j2"
PATH_LABEL = {"mnn": "MNN", "onnx2ncnn": "onnx2ncnn → ncnn", "pnnx": "pnnx → ncnn",
              "pnnx-torch": "pnnx from TorchScript → ncnn"}


def page_name(op: str) -> str:
    return f"{FOLDER}/{op}.md"


@dataclass
class Column:
    engine: str
    version: str
    runtime: str

    @property
    def label(self) -> str:
        return f"{PATH_LABEL.get(self.engine, self.engine)} {self.version}"


@dataclass
class Conformance:
    """Every ledger of a corpus, read once."""

    tables: dict[str, Table]
    index: conformance.CaseIndex | None
    columns: list[Column] = field(default_factory=list)

    @classmethod
    def load(cls, root: Path) -> Conformance:
        tables = {e: conformance.load(conformance.path(root, e), e) for e in conformance.engines(root)
                  if e in PATH_LABEL}
        index = conformance.load_cases(root)
        if torch := conformance.load_cases(root, "torch"):  # case names never meet: test_* and torch.*-0
            index = conformance.CaseIndex(onnx=index.onnx if index else "", torch=torch.torch,
                                          cases={**(index.cases if index else {}), **torch.cases})
        c = cls(tables, index)
        for e, t in tables.items():
            for v in sorted(t.versions(), key=version_key, reverse=True):
                where = next((cell.where for per in t.cells.values() for vv, cell in per.items() if vv == v), None)
                c.columns.append(Column(e, v, where.runtime if where else ""))
        return c

    def columns_of(self, cases: list[str]) -> list[Column]:
        """The columns whose path measured any of `cases`: an ONNX op's paths, or a torch op's one."""
        return [c for c in self.columns if any(case in self.tables[c.engine].cells for case in cases)]

    def ops(self) -> dict[str, list[str]]:
        """op -> its cases, sorted."""
        found: dict[str, set[str]] = {}
        for t in self.tables.values():
            for case, op in t.ops.items():
                found.setdefault(op, set()).add(case)
        return {op: sorted(cases) for op, cases in sorted(found.items(), key=lambda kv: kv[0].lower())}


def search_pages(conf: Conformance) -> dict[str, list[str]]:
    """op -> the engines its page is about, for the search box (kb.match.words.SiteIndex): each path measured on
    the op, and the runtime its models run on (a query saying "ncnn" is about onnx2ncnn's and pnnx's pages)."""
    from kb.opfigures import runs_on

    out: dict[str, list[str]] = {}
    for e, t in conf.tables.items():
        if conformance.source(e) != "onnx":
            continue  # torch's op pages are out of the search box (op.md.j2 says why)
        engines = [e] + [r for r in [runs_on(t)] if r]
        for op in set(t.ops.values()):
            out.setdefault(op, [])
            out[op] += [en for en in engines if en not in out[op]]
    return {op: out[op] for op in conf.ops() if op in out}


def _group(case: str, op: str, info) -> str:
    if info is not None and info.attrs:
        return info.attrs
    if case.endswith("_expanded") or "_expanded_" in case:
        return "function expansion (the op written as its ONNX function body)"
    return "default attributes"


def trigger_ops(entry: Entry) -> list[str]:
    """The ops the entry's trigger patterns name, each once, in their order."""
    return list(dict.fromkeys(op for p in entry.meta.trigger for spec in p.nodes.values()
                              for op in sorted(spec.ops() or ())))


def _triggered_by(entries: list[Entry]) -> dict[str, list[Entry]]:
    """op -> the entries whose trigger pattern names it."""
    found: dict[str, list[Entry]] = {}
    for e in entries:
        for op in trigger_ops(e):
            found.setdefault(op, []).append(e)
    return found


def _counts(cells) -> dict[str, int]:
    counts = {str(o): 0 for o in Outcome}
    for cell in cells:
        counts[str(cell.outcome)] += 1
    return counts


def source(op: str, cases: list[str], conf: Conformance) -> str:
    """Whose cases the op's are: "onnx" (node tests) or "torch" (op samples)."""
    return next((conformance.source(e) for e, t in conf.tables.items() if cases and cases[0] in t.cells), "onnx")


def op_page(op: str, cases: list[str], conf: Conformance, entries: list[Entry], onnx: str) -> str:
    columns = conf.columns_of(cases)
    info = conf.index.cases if conf.index else {}
    groups: dict[str, list[dict]] = {}
    for case in cases:
        row = {"case": case, "fed": info[case].fed if case in info else "", "cells": [],
               "disputed": info[case].disputed if case in info else ""}
        for col in columns:
            cell = conf.tables[col.engine].cells.get(case, {}).get(col.version)
            row["cells"].append(cell)
        groups.setdefault(_group(case, op, info.get(case)), []).append(row)
    summary = []
    for i, col in enumerate(columns):
        mine = [(case, conf.tables[col.engine].cells[case][col.version]) for case in cases
                if col.version in conf.tables[col.engine].cells.get(case, {})]
        summary.append({"col": col, "n": len(mine), "counts": _counts(c for _, c in mine),
                        "failures": failures(mine)})
    ordered = sorted(groups.items(), key=lambda kv: (kv[0] == "default attributes", kv[0].startswith("function"), kv[0]))
    ordered.sort(key=lambda kv: 0 if kv[0] == "default attributes" else 1)
    src = source(op, cases, conf)
    return env.get_template(TEMPLATE).render(
        op=op, source=src, release=onnx if src == "onnx" else (conf.index.torch if conf.index else "?"),
        engine_flag=columns[0].engine if columns else "mnn", cases=cases, columns=columns, summary=summary, groups=ordered,
        outcomes=[str(o) for o in Outcome], entries=_triggered_by(entries).get(op, []),
        engines=sorted({PATH_LABEL.get(c.engine, c.engine) for c in columns}),
        labels={e: ENGINES[e].shown for e in ENGINES})


def pages(root: Path, entries: list[Entry], conf: Conformance | None = None
          ) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(file name -> Markdown, nav (title, file name)) of the op pages and their index; none without a ledger.
    `conf`: the ledgers, if the caller has read them already."""
    conf = conf or Conformance.load(root)
    if not conf.tables:
        return {}, []
    onnx = conf.index.onnx if conf.index else "?"
    ops = conf.ops()
    out, nav = {}, []
    sources = {op: source(op, cases, conf) for op, cases in ops.items()}
    tables = {src: {"source": src, "rows": [], "columns": conf.columns_of(
        [c for op, cs in ops.items() if sources[op] == src for c in cs])} for src in ("onnx", "torch")}
    # torch's table: the newest and the oldest release only (29 columns left no room for an op's name on a
    # phone); each op's page has every release
    torch_columns = tables["torch"]["columns"]
    tables["torch"]["releases"] = len(torch_columns)
    tables["torch"]["columns"] = torch_columns[:1] + torch_columns[-1:] if len(torch_columns) > 2 else torch_columns
    for op, cases in ops.items():
        out[page_name(op)] = op_page(op, cases, conf, entries, onnx)
        nav.append((op, page_name(op)))
        table = tables[sources[op]]
        per = []
        for col in table["columns"]:
            cells = [conf.tables[col.engine].cells[c][col.version] for c in cases
                     if col.version in conf.tables[col.engine].cells.get(c, {})]
            measured = [c for c in cells if c.outcome.verdict.value in ("works", "broken")]
            per.append({"works": sum(c.outcome == Outcome.WORKS for c in cells), "measured": len(measured),
                        "n": len(cells)})
        table["rows"].append({"op": op, "n": len(cases), "per": per})
    out[f"{FOLDER}/index.md"] = env.get_template(INDEX_TEMPLATE).render(
        tables=[t for t in tables.values() if t["rows"]], onnx=onnx,
        torch=conf.index.torch if conf.index else "")
    return out, [("All ops", f"{FOLDER}/index.md"), *nav]


SECTION = 40  # op pages per nav section: each op page renders its own section (navigation.prune), not all ~600


def nav_sections(nav: list[tuple[str, str]]) -> list:
    """pages()'s flat nav as mkdocs nav: the index, then ONNX's ops and torch's (a dotted name: F.pad, torch.roll),
    each in sections of at most SECTION pages named by their first and last op. A page then renders a few dozen nav
    items, not every op (the build's time and a phone's menu)."""
    def sections(items):
        items = sorted(items, key=lambda t: t[0].casefold())
        if len(items) <= SECTION:
            return [{t: f} for t, f in items]
        chunks = [items[i:i + SECTION] for i in range(0, len(items), SECTION)]
        return [{f"{c[0][0]} – {c[-1][0]}": [{t: f} for t, f in c]} for c in chunks]

    index = [(t, f) for t, f in nav if f.endswith(f"{FOLDER}/index.md")]
    pages_ = [o for o in nav if o not in index]
    groups = (("ONNX", [o for o in pages_ if "." not in o[0]]),
              ("torch, through pnnx", [o for o in pages_ if "." in o[0]]))
    return [{t: f} for t, f in index] + [{title: sections(items)} for title, items in groups if items]
