"""An op's figure on one engine path and release, from the conformance ledgers (conformance/<engine>.yaml, written
by `kb conform`): how many of onnx's own node tests of the op work there, and how the others fail.

An engine's message that it lacks an op (repros/_messages/ with `unsupported_op`: "Einsum not supported yet!")
says nothing of how far the engine gets with that op elsewhere; the figure does. The message pages
(kb.site.messages) and `kb explain` (kb.match.report) give it; the op pages (kb.site.ops) group failures the
same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kb.conformance import Table, source
from kb.verdicts import Outcome, Verdict
from kb.versions import version_key

FAILURES_SHOWN = 8  # distinct failure lines per engine and outcome

_NUMBERS = re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?")
_NAN = re.compile(r", ([1-9]\d*) NaN of ")


def _wrong(detail: str) -> str:
    """A wrong result's line, its figures aside, so cases that are wrong the same way share it."""
    if "not a batch of 1" in detail:  # kb.conform.NO_BATCH
        return "wrong where the input's leading axis is not a batch of 1 (onnx2ncnn takes axis 0 for the batch)"
    if "has shape" in detail or "is missing" in detail:
        return _NUMBERS.sub("#", detail.split(": ", 1)[-1])
    if _NAN.search(detail):
        return "NaN or infinite outputs where the reference is finite"
    return "outputs differ from the reference beyond the tolerance"


def failures(cells: list[tuple[str, object]]) -> list[dict]:
    """Per outcome other than works: how many cases, and their distinct lines (numbers aside), most common first."""
    by: dict[str, dict[str, list[str]]] = {}
    for case, cell in cells:
        if cell.outcome == Outcome.WORKS:
            continue
        # a message naming the case's own tensors (expanded functions are named after the case) groups as one
        key = _wrong(cell.detail) if cell.outcome.wrong else cell.detail.replace(case, "<case>")
        by.setdefault(cell.outcome, {}).setdefault(key, []).append(case)
    out = []
    for outcome in Outcome:
        lines = by.get(outcome)
        if not lines:
            continue
        ranked = sorted(lines.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        out.append({"outcome": str(outcome), "n": sum(len(c) for c in lines.values()),
                    "lines": [{"line": k, "cases": cases} for k, cases in ranked[:FAILURES_SHOWN]],
                    "more": max(0, len(ranked) - FAILURES_SHOWN)})
    return out


CASES_OF = {"onnx": "ONNX node tests", "torch": "torch op samples"}  # a ledger's cases, by their source


@dataclass(frozen=True)
class Figure:
    op: str
    engine: str  # the ledger's engine path (mnn, onnx2ncnn, pnnx, pnnx-torch)
    version: str
    works: int
    taken: int  # the cases the path could take: those that work or broke (never not applicable, cannot feed)
    cases: int  # every case of the op measured on the release
    failures: list[dict]  # failures(): per outcome other than works

    def how(self) -> list[tuple[str, str]]:
        """How the cases that broke did, most common line of each outcome: ("3 fail to convert", its line)."""
        out = []
        for f in self.failures:
            if Outcome(f["outcome"]).verdict != Verdict.BROKEN:
                continue
            words = f["outcome"] if f["n"] == 1 else re.sub(r"^fails ", "fail ", f["outcome"])
            out.append((f"{f['n']} {words}", f["lines"][0]["line"] if f["lines"] else ""))
        return out

    def text(self) -> str:
        """'onnx2ncnn a4d2ea1: Gather: 0 of 4 ONNX node tests work (4 fail to convert: `... Gather not supported
        yet!`)', then how many more the path could not take (not applicable, cannot feed), if any."""
        from kb.engines import ENGINES

        where = f"{ENGINES[self.engine].shown if self.engine in ENGINES else self.engine} {self.version}: {self.op}"
        tests = CASES_OF[source(self.engine)]
        if not self.taken:
            return f"{where}: none of its {self.cases} {tests} could be fed to this path"
        how = "; ".join(n + (f": `{line}`" if line else "") for n, line in self.how())
        out = f"{where}: {self.works} of {self.taken} {tests} work" + (f" ({how})" if how else "")
        rest = self.cases - self.taken
        return out + (f"; {rest} more {'is' if rest == 1 else 'are'} not applicable or cannot be fed" if rest else "")


def figure(table: Table, op: str, version: str | None = None) -> Figure | None:
    """The op's figure on the table's release `version` (the newest measured, where None or not measured); None
    where the op has no case there."""
    present = set(table.ops.values())
    op = next((name for name in spellings(op) if name in present), op)
    cases = sorted(c for c, o in table.ops.items() if o == op and table.cells.get(c))
    releases = {v for c in cases for v in table.cells[c]}
    if not releases:
        return None
    v = version if version in releases else max(releases, key=version_key)
    cells = [(c, table.cells[c][v]) for c in cases if v in table.cells[c]]
    taken = [cell for _, cell in cells if cell.outcome.verdict in (Verdict.WORKS, Verdict.BROKEN)]
    return Figure(op, table.engine, v, sum(cell.outcome == Outcome.WORKS for _, cell in cells), len(taken),
                  len(cells), failures(cells))


def spellings(op: str) -> list[str]:
    """The names an op left unconverted may have in a ledger: pnnx leaves a torch op as torch.X, Tensor.X, F.X or
    aten::X, while its pnnx-torch case is named as torch's API spells it (torch.X where torch has it, else
    Tensor.X; F.X). ONNX's names are themselves."""
    for prefix in ("aten::", "torch.", "Tensor."):
        if op.startswith(prefix):
            rest = op.removeprefix(prefix)
            return list(dict.fromkeys([op, f"torch.{rest}", f"Tensor.{rest}", f"F.{rest}"]))
    return [op]


def runs_on(table: Table) -> str:
    """The runtime the path's converted models run on ("ncnn"), from the ledger's provenance; "" if its own."""
    where = next((cell.where for per in table.cells.values() for cell in per.values()), None)
    return where.runtime.split()[0] if where and where.runtime else ""


def paths(engine: str, tables: dict[str, Table]) -> list[str]:
    """The engine paths an engine's message concerns: its own (onnx2ncnn, mnn), or those whose models run on it
    (ncnn: onnx2ncnn's and pnnx's)."""
    return [e for e, t in tables.items() if e == engine or runs_on(t) == engine]


def tables(root: Path, engines: set[str] | None = None) -> dict[str, Table]:
    """The ledgers under `root`; with `engines`, only theirs where each has one (a ledger is a second's parse:
    kb explain reads one for onnx2ncnn's line), else all (ncnn's paths are known by their provenance)."""
    from kb import conformance

    names = conformance.engines(root)
    if engines and engines <= set(names):
        names = sorted(engines)
    return {e: conformance.load(conformance.path(root, e), e) for e in names}


def of_messages(shown: list, lines: list[str], root: Path, versions: dict[str, str] | None = None) -> list[Figure]:
    """For each message of `shown` that names an op its engine lacks (`unsupported_op`), each op its lines in
    `lines` name, in their order: its figure on each path of the message's engine, on the release `versions`
    gives for the path (else the newest measured). Ops without a case on a path give nothing."""
    from kb.messages import named_ops

    wanted: list[tuple[str, str]] = []  # (op, engine of the message)
    for m in shown:
        if not m.unsupported_op:
            continue
        wanted += [(op, en) for line in lines for op in named_ops(m, line) for en in m.engines]
    if not wanted:
        return []
    found = tables(root, {en for _, en in wanted})
    out = []
    for op, engine in dict.fromkeys(wanted):
        for path in paths(engine, found):
            f = figure(found[path], op, (versions or {}).get(path))
            if f is not None and f not in out:
                out.append(f)
    return out
