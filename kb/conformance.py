"""The conformance ledger: how each ONNX node-test case fared on each release of one engine path.

`conformance/<engine>.yaml` (written by `kb conform --accept`, read by `kb conform` and the op pages). As an
entry's expected.yaml does, it groups each case's releases into runs of consecutive releases with one outcome
(kb.verdicts.Outcome) and the newest run's short detail; where, when and with what (onnx's cases, the ncnn
runtime) a run was observed is listed once under `provenance`. One line per case, so a diff after an upgrade
reads as the cases that moved.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from kb import paths, yamlio
from kb.entries import write_whole
from kb.errors import KBError
from kb.verdicts import Outcome, Verdict
from kb.versions import sort_versions, version_key

FOLDER = "conformance"
HEADER = ("# Conformance (onnx's node tests; torch's op samples on pnnx-torch): case -> runs of releases with one\n"
          "# outcome each (kb conform).\n"
          "# Written by `kb conform --accept`; `kb conform` compares a run with it.\n")
DETAIL_CHARS = 200
# An engine path is named after its engine and runs onnx's node tests, except where these say otherwise.
ENGINE_OF = {"pnnx-torch": "pnnx"}  # a path's engine
SOURCE = {"pnnx-torch": "torch"}  # a path's cases: torch's op samples (kb.torchcases)
MODEL_FILE = {"onnx": "model.onnx", "torch": "model.pt"}  # a case's model, by its cases' source


def source(engine: str) -> str:
    """Whose cases an engine path runs: "onnx" (onnx's node tests) or "torch" (torch's op samples)."""
    return SOURCE.get(engine, "onnx")


def engine_of(path: str) -> str:
    """The engine an engine path runs (pnnx for pnnx-torch)."""
    return ENGINE_OF.get(path, path)


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid")
    date: str
    platform: str
    onnx: str = ""  # the onnx release whose node cases were run
    torch: str = ""  # or the torch release whose op samples were (the pnnx-torch path)
    runtime: str = ""  # the runtime the converter's output ran on, where it is another engine (ncnn)


class Run(BaseModel):
    model_config = ConfigDict(extra="forbid")
    versions: list[str]
    outcome: Outcome
    detail: str = ""
    seen: str


class CaseRuns(BaseModel):
    model_config = ConfigDict(extra="forbid")
    op: str
    runs: list[Run]


class Ledger(BaseModel):
    model_config = ConfigDict(extra="forbid")
    engine: str
    provenance: dict[str, Provenance] = {}
    cases: dict[str, CaseRuns] = {}


@dataclass(frozen=True)
class Cell:
    """One case on one release."""

    outcome: Outcome
    detail: str
    where: Provenance


@dataclass
class Table:
    engine: str
    ops: dict[str, str]  # case -> op
    cells: dict[str, dict[str, Cell]]  # case -> release -> cell

    def newest(self, case: str) -> tuple[str, Cell] | None:
        per = self.cells.get(case) or {}
        if not per:
            return None
        v = max(per, key=version_key)
        return v, per[v]

    def versions(self) -> list[str]:
        return sort_versions({v for per in self.cells.values() for v in per})


def path(root: Path, engine: str) -> Path:
    return root / FOLDER / f"{engine}.yaml"


def engines(root: Path) -> list[str]:
    """The engines that have a ledger under `root`."""
    return sorted(p.stem for p in (root / FOLDER).glob("*.yaml") if not p.name.endswith(CASES))  # the cases' indexes


def load(file: Path, engine: str | None = None) -> Table:
    """The ledger at `file` as a table; an empty one when there is no file."""
    engine = engine or file.stem
    if not file.is_file():
        return Table(engine, {}, {})
    text = file.read_text(encoding="utf-8")
    # Parsed once per content (a ledger is megabytes of YAML: kb explain and the site read all three)
    kept = paths.state("cache") / "conformance" / f"{hashlib.sha256(_CODE + text.encode()).hexdigest()[:32]}.pickle"
    try:
        return pickle.loads(kept.read_bytes())
    except Exception:  # noqa: BLE001 -- absent, torn or from another version: parse again
        pass
    table = _parse(file, text)
    write_whole(kept, pickle.dumps(table))
    return table


_CODE = Path(__file__).read_bytes()


def _parse(file: Path, text: str) -> Table:
    try:
        raw = yamlio.load(text) or {}
        ledger = Ledger.model_validate(raw)
        table = Table(ledger.engine, {}, {})
        for case, cr in ledger.cases.items():
            table.ops[case] = cr.op
            for run in cr.runs:
                for v in run.versions:
                    table.cells.setdefault(case, {})[str(v)] = Cell(run.outcome, run.detail, ledger.provenance[run.seen])
        return table
    except (yaml.YAMLError, AttributeError, TypeError, KeyError, ValidationError) as e:
        raise KBError(file, f"not a valid conformance ledger: {str(e).splitlines()[0]}") from None


class _Flow(dict):
    """A case's entry, written on one line."""


yamlio.DUMPER.add_representer(_Flow, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))


def dump(table: Table) -> str:
    fields = tuple(Provenance.model_fields)

    def at(c: Cell) -> tuple:
        return tuple(getattr(c.where, f) for f in fields)

    places = sorted({at(c) for per in table.cells.values() for c in per.values()})
    key = {p: f"p{i + 1}" for i, p in enumerate(places)}
    cases = {}
    for case in sorted(table.cells):
        runs: list[dict] = []
        per = table.cells[case]
        for v in sort_versions(per):
            c = per[v]
            if runs and runs[-1]["outcome"] == str(c.outcome):
                runs[-1]["versions"].append(v)
            else:
                runs.append({"versions": [v], "outcome": str(c.outcome)})
            runs[-1].update(detail=c.detail, seen=key[at(c)])  # the newest release of the run gives both
        cases[case] = _Flow(op=table.ops.get(case, "?"),
                            runs=[{k: r[k] for k in ("versions", "outcome", "detail", "seen") if r[k]} for r in runs])
    data = {"engine": table.engine,
            "provenance": {key[p]: _Flow({k: v for k, v in zip(fields, p) if v})
                           for p in places},
            "cases": cases}
    return HEADER + yaml.dump(data, Dumper=yamlio.DUMPER, sort_keys=False, allow_unicode=True, width=100000)


@contextmanager
def locked(file: Path):
    """Hold the ledger's lock: shards of one run accept into the same file."""
    file.parent.mkdir(parents=True, exist_ok=True)
    with open(file.with_name(f".{file.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def write(file: Path, table: Table) -> None:
    tmp = file.with_name(f"{file.name}.tmp-{os.getpid()}")
    tmp.write_text(dump(table), encoding="utf-8")
    tmp.replace(file)


_VOLATILE = [(re.compile(r"\[\d\d:\d\d:\d\d\]\s*(:\d+:)?\s*"), ""), (re.compile(r"(/[\w.+-]+)+/"), ""),
             (re.compile(r"0x[0-9a-f]+"), "0x?"),
             (re.compile(r"^\S+ vs onnx [\w.+-]+ reference: "), "")]  # who compared with what: the file says


def short(detail: str) -> str:
    """A detail as the ledger keeps it: one line, no clock, directory or address, bounded."""
    line = " ".join(detail.split())
    for rx, sub in _VOLATILE:
        line = rx.sub(sub, line)
    return line if len(line) <= DETAIL_CHARS else line[: DETAIL_CHARS - 1] + "…"


def accept(file: Path, engine: str, results: list[dict], where: Provenance) -> int:
    """Fold results (dicts with case, op, engine_version, outcome, detail) into the ledger at `file`, under its
    lock, each replacing what was accepted for its case and release; other cases stay. Returns how many."""
    with locked(file):
        table = load(file, engine)
        for r in results:
            table.ops[r["case"]] = r["op"]
            per = table.cells.setdefault(r["case"], {})
            cell = Cell(Outcome(r["outcome"]), short(r["detail"]) if r["outcome"] != Outcome.WORKS or r.get("intermittent")
                        else "", where)
            old = per.get(r["engine_version"])
            if old is not None and old.outcome == cell.outcome and is_intermittent(old) and not is_intermittent(cell):
                cell = Cell(cell.outcome, old.detail, where)  # a case once seen to flip stays marked so
            per[r["engine_version"]] = cell
        write(file, table)
    return len(results)


# How a result compares with what was accepted.
EXPECTED, NEW = "expected", "new"
FIXED, REGRESSION, DIFFERENTLY, CHANGED = "fixed", "regression", "fails differently", "changed"
INTERMITTENT = "intermittent"  # as accepted on a rerun (kb.conform.run): listed, never a change


def is_intermittent(cell: Cell) -> bool:
    """Runs of this case were seen to disagree (kb.conform.run): one differing run is not a fix or a regression."""
    return "intermittent: " in cell.detail


def change(table: Table, case: str, version: str, outcome: Outcome) -> tuple[str, str | None]:
    """(what moved, the release compared with): against this very release when accepted, else the nearest older
    accepted release (else the oldest): a new release says which cases it fixed and which it broke."""
    per = table.cells.get(case) or {}
    if not per:
        return NEW, None
    if version in per:
        base = version
    else:
        known = sorted(per, key=version_key)
        older = [v for v in known if version_key(v) < version_key(version)]
        base = older[-1] if older else known[0]
    was = per[base].outcome
    if was == outcome:
        word = EXPECTED
    elif outcome == Outcome.WORKS and was.verdict == Verdict.BROKEN:
        word = FIXED
    elif was == Outcome.WORKS and outcome.verdict == Verdict.BROKEN:
        word = REGRESSION
    elif was.verdict == outcome.verdict:
        word = DIFFERENTLY
    else:
        word = CHANGED
    if base != version and word == EXPECTED:
        return NEW, base  # the same as the older release, but nothing accepted for this one yet
    return word, base


# ---------------------------------------------------------------- the cases' index

CASES = "cases.yaml"
TORCH_HEADER = ("# torch's op samples kb conform runs on the pnnx-torch path (kb.torchcases): case -> op as a model\n"
                "# spells it, the op's other operands (held as constants), the input fed.\n")
CASES_HEADER = ("# onnx's node-test cases kb conform runs: case -> op, the node's attributes, the input fed (every other\n"
                "# input is an initializer holding the case's value), and why kb cannot feed it, if so.\n")


class CaseInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    op: str
    attrs: str = ""
    fed: str = ""  # "name dtype[shape]" of each input fed, comma-separated
    problem: str = ""
    # onnxruntime, the reference engine, also differs from ONNX's reference output: an engine's "wrong values"
    # there may be ONNX's (the op pages say so; kb scan never reports the case)
    disputed: str = ""


class CaseIndex(BaseModel):
    model_config = ConfigDict(extra="forbid")
    onnx: str = ""  # the release whose cases these are: onnx's node tests (cases.yaml)
    torch: str = ""  # or torch's op samples (torch-cases.yaml)
    cases: dict[str, CaseInfo] = {}


def _cases_file(root: Path, source: str) -> Path:
    return root / FOLDER / (CASES if source == "onnx" else f"{source}-{CASES}")


def load_cases(root: Path, source: str = "onnx") -> CaseIndex | None:
    file = _cases_file(root, source)
    if not file.is_file():
        return None
    try:
        return CaseIndex.model_validate(yamlio.load(file.read_text(encoding="utf-8")) or {})
    except (yaml.YAMLError, ValidationError) as e:
        raise KBError(file, f"not a valid case index: {str(e).splitlines()[0]}") from None


def write_cases(root: Path, index: CaseIndex, source: str = "onnx") -> None:
    file = _cases_file(root, source)
    file.parent.mkdir(parents=True, exist_ok=True)
    data = {source: getattr(index, source),
            "cases": {n: _Flow({k: v for k, v in c.model_dump().items() if v}) for n, c in sorted(index.cases.items())}}
    tmp = file.with_name(f"{file.name}.tmp-{os.getpid()}")
    header = CASES_HEADER if source == "onnx" else TORCH_HEADER
    tmp.write_text(header + yaml.dump(data, Dumper=yamlio.DUMPER, sort_keys=False, allow_unicode=True, width=100000),
                   encoding="utf-8")
    tmp.replace(file)
