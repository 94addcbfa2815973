"""Declaring an entry's checks: what each check runs, and what counts as the bug or the workaround.

An entry's test_checks.py declares them with `checks.bug`, `checks.variants`, `checks.control` and
`checks.workaround` (the kinds are kb.verdicts.CheckKind). This module
imports no engine driver: pytest collection, the site and scan read declarations without running
anything. kb.harness runs them.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kb.engines import ENGINES
from kb.entries import Entry, load_entry
from kb.errors import KBError
from kb.verdicts import CheckKind


@dataclass(frozen=True)
class Check:
    name: str
    kind: CheckKind
    engine: str
    fn: Callable | None  # None where read from the source (declared_checks): reading never runs it
    signatures: tuple[str, ...] = ()  # for bugs: what counts as "reproduces"
    workaround: str | None = None  # for workarounds: the front matter's workaround id
    needs: tuple[str, ...] = ()  # other engines the check drives
    atol: float = 1e-4
    rtol: float = 1e-3
    range_tol: float | None = None  # for quantized outputs: max diff as a fraction of the output range
    attempts: int = 1  # runs, each with another memory layout (kb.harness.layout); one failure decides
    doc: str = ""
    variant: str | None = None  # a variant check: the reproducer's variant case it runs
    run: str | None = None  # a row's pipeline (kb.pipelines); None: a function of test_checks.py

    @property
    def engines(self) -> tuple[str, ...]:
        return (self.engine, *self.needs)

    @property
    def cpu(self) -> str | None:
        """The emulated CPU a row runs on (its `cpu:`, kb.tools.arm64), or None: this machine's own."""
        return (getattr(self.fn, "keywords", None) or {}).get("cpu")

    @property
    def options(self) -> dict:
        """The engine options a row sets (its `options:`, e.g. use_bf16_storage), or {}: the engine's defaults."""
        return (getattr(self.fn, "keywords", None) or {}).get("options") or {}


class Checks:
    """The checks of one entry, declared in its test_checks.py."""

    def __init__(self, test_file: str):
        self.dir = Path(test_file).resolve().parent
        self.items: dict[str, Check] = {}

    def _add(self, fn: Callable, **kw) -> Callable:
        name = fn.__name__.replace("_", "-")
        self._new(Check(name=name, fn=fn, doc=(fn.__doc__ or "").strip(), **kw))
        return fn

    def _new(self, check: Check) -> None:
        if check.name in self.items:
            raise KBError(self.dir / "test_checks.py", f"two checks are named {check.name!r}")
        self.items[check.name] = check

    def bug(self, engine: str, signatures: list[str], *, needs=(), **tolerances):
        return lambda fn: self._add(fn, kind=CheckKind.BUG, engine=engine, signatures=tuple(signatures),
                                    needs=tuple(needs), **tolerances)

    def control(self, engine: str, *, needs=(), **tolerances):
        """A model without the trigger on the same engine path: it must run and match torch. It shows the
        trigger is what fails; it never counts toward "fixed"."""
        return lambda fn: self._add(fn, kind=CheckKind.CONTROL, engine=engine, needs=tuple(needs), **tolerances)

    def workaround(self, engine: str, workaround: str, *, needs=(), **tolerances):
        """Judged against the ORIGINAL model's torch output: a rewrite case declares `rewrites=`."""
        return lambda fn: self._add(fn, kind=CheckKind.WORKAROUND, engine=engine, workaround=workaround,
                                    needs=tuple(needs), **tolerances)

    def variants(self, engine: str, signatures: list[str], cases: list[str] | None = None, *, needs=(),
                 **tolerances):
        """One variant check per variant case, named `variant-<case>`: `fn(s, case)` runs the same engine
        path on each. Their verdicts say which variants the engine fails on: the trigger's scope.
        `cases` defaults to every case that repro.py's variants() yields, read from its source."""
        if cases is None:
            cases = variant_names(self.dir / "repro.py")

        def add(fn: Callable) -> Callable:
            for case in cases:
                name = f"variant-{case}"
                self._new(Check(name=name, kind=CheckKind.VARIANT, engine=engine, signatures=tuple(signatures),
                                needs=tuple(needs), fn=lambda s, case=case: fn(s, case), variant=case,
                                doc=f"Variant {case!r}: {(fn.__doc__ or '').strip()}".strip(": "), **tolerances))
            return fn

        return add

    def entry(self) -> Entry:
        """Every signature, workaround and engine a check names is declared in the front matter; each
        workaround limit is a check of that workaround; there is at least one bug check; each check a
        trigger names exists."""
        entry = load_entry(self.dir)
        known_sigs = {s.id for s in entry.meta.signatures}
        known_fixes = {w.id for w in entry.meta.workarounds}
        for c in self.items.values():
            for sid in c.signatures:
                if sid not in known_sigs:
                    raise KBError(entry.test, f"check {c.name!r} names unknown signature {sid!r}")
            if c.workaround and c.workaround not in known_fixes:
                raise KBError(entry.test, f"check {c.name!r} names unknown workaround {c.workaround!r}")
            for e in c.engines:
                if e not in ENGINES:
                    raise KBError(entry.test, f"check {c.name!r} names unknown engine {e!r}")
        for w in entry.meta.workarounds:
            for limit in w.limits:
                c = self.items.get(limit.check)
                if c is None or c.workaround != w.id:
                    raise KBError(entry.page, f"workaround {w.id!r}: limit {limit.check!r} is not one of its checks")
        if not any(c.kind == CheckKind.BUG for c in self.items.values()):
            raise KBError(entry.test, "declares no `checks.bug(...)`: an entry's status comes from its bug checks")
        for p in entry.meta.trigger:
            for glob in p.checks:
                if not fnmatch.filter(self.items, glob):
                    raise KBError(entry.page, f"trigger {p.name!r} names unknown check {glob!r}")
        return entry


def add_rows(checks: Checks, rows) -> None:
    """The front matter's check rows (kb.schema.CheckRow), each running one named pipeline."""
    from kb.pipelines import PIPELINES

    for row in rows:
        pipe = PIPELINES[row.run]
        engine = row.engine or pipe.engine
        common = dict(engine=engine, needs=tuple(e for e in pipe.needs if e != engine),
                      **{k: getattr(row, k) for k in ("atol", "rtol", "range_tol", "attempts") if getattr(row, k) is not None})
        opts = row.settings()
        if row.script and not (checks.dir / row.script).is_file():
            raise KBError(checks.dir / "README.md", f"check {row.name!r}: no script {row.script!r} in the entry's folder")
        if row.variants is not None:
            for case in variant_names(checks.dir / "repro.py"):
                if (row.match and not re.search(row.match, case)) or (row.skip and re.search(row.skip, case)):
                    continue
                name = f"variant-{case}"
                checks._new(Check(name=name, kind=CheckKind.VARIANT, signatures=tuple(row.variants), variant=case,
                                  doc=f"Variant {case!r}: {row.doc or pipe.doc}", run=row.run,
                                  fn=functools.partial(pipe.call, case=case, **opts), **common))
            continue
        kind = CheckKind.BUG if row.bug is not None else CheckKind.WORKAROUND if row.workaround else CheckKind.CONTROL
        checks._new(Check(name=row.name, kind=kind, signatures=tuple(row.bug or ()), workaround=row.workaround,
                          doc=row.doc, run=row.run, fn=functools.partial(pipe.call, case=row.case, **opts), **common))


def variant_names(repro: Path) -> list[str]:
    """The names of the variants, read from the source (no torch): first each way a case of `cases()` is also
    exported (`Case("<name>", ..., ways=True)`, kb.ways), then the cases `variants()` yields: each
    `Case("<name>", ...)`, a call of one of repro.py's own functions with the name first (`yield
    case("<name>", ...)`), and the cases of a function of kb.blocks it yields from (`yield from fp16_variants()`)."""
    tree = ast.parse(repro.read_text(encoding="utf-8"))
    names = _ways(repro, tree)
    if any(isinstance(n, ast.FunctionDef) and n.name == "variants" for n in tree.body) or not names:
        names += _yielded(repro, "variants")
    if not names:  # cases built elsewhere (a loop over another function) would give no checks at all
        raise KBError(repro, "variants() shows no Case(\"<name>\", ...); pass checks.variants(..., cases=[...]) instead")
    return names


def _ways(source: Path, tree: ast.Module) -> list[str]:
    """The variants of the cases of `cases()` exported other ways (a literal `ways=` and literal settings)."""
    from kb.ways import OPSET, ways_of

    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "cases"), None)
    names = []
    for node in ast.walk(fn) if fn else ():
        kw = {k.arg: k.value for k in getattr(node, "keywords", ())}
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Case" and "ways" in kw):
            continue
        try:
            args = dict(name=ast.literal_eval(node.args[0]), ways=ast.literal_eval(kw["ways"]),
                        opset=ast.literal_eval(kw.get("opset", ast.Constant(OPSET))), dynamo=ast.literal_eval(kw["dynamo"]),
                        simplify=ast.literal_eval(kw.get("simplify", ast.Constant(False))))
            names += ways_of(**args)
        except (ValueError, IndexError, KeyError) as e:
            raise KBError(source, f"line {node.lineno}: a case with ways= needs its name, ways, opset, dynamo and "
                                  f"simplify written as literals ({e or 'missing'})") from None
    return names


def _yielded(source: Path, function: str) -> list[str]:
    tree = ast.parse(source.read_text(encoding="utf-8"))
    own = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} - {"cases", "variants"}
    shared = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "kb.blocks"
              for a in n.names}
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function), None)
    if fn is None:
        raise KBError(source, f"checks.variants(...) without cases needs a {function}() function here")
    yielded = {id(y.value) for y in ast.walk(fn) if isinstance(y, (ast.Yield, ast.YieldFrom))}
    names = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        called = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if called in shared and id(node) in yielded:
            names += _yielded(Path(__file__).parent / "blocks.py", called)
        elif called == "Case" or (called in own and id(node) in yielded):
            if function == "variants" and any(k.arg == "ways" for k in node.keywords):
                raise KBError(source, f"line {node.lineno}: ways= is read in cases() only; a variant is one export")
            first = node.args[0] if node.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                raise KBError(source, f"line {node.lineno}: a variant's name is computed; pass "
                                      "checks.variants(..., cases=[...]) instead")
            names.append(first.value)
    return names


def load_checks(entry: Entry) -> Checks:
    """The entry's checks, ready to run: its front matter's rows, then its test_checks.py's functions
    (imported: cheap, engines are only touched in children)."""
    if not entry.test.is_file():
        checks = Checks(str(entry.test))
        add_rows(checks, entry.meta.checks)
        checks.entry()
        return checks
    spec = importlib.util.spec_from_file_location(f"kb_checks_{entry.slug.replace('-', '_')}", entry.test)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except KBError:
        raise
    except Exception as e:  # a broken entry is reported, never a traceback
        raise KBError(entry.test, f"cannot be imported: {type(e).__name__}: {e}") from None
    found = [v for v in vars(module).values() if isinstance(v, Checks)]
    if len(found) != 1:
        raise KBError(entry.test, "must define exactly one `checks = Checks(__file__)`")
    return _with_rows(found[0], entry)


def _with_rows(functions: Checks, entry: Entry) -> Checks:
    """Rows first, then the functions, in declaration order; validated against the front matter."""
    checks = Checks(str(entry.test))
    add_rows(checks, entry.meta.checks)
    for c in functions.items.values():
        checks._new(c)
    checks.entry()
    return checks


# ---------------------------------------------------------------- reading without importing

_KINDS = {"bug": CheckKind.BUG, "control": CheckKind.CONTROL, "workaround": CheckKind.WORKAROUND,
          "variants": CheckKind.VARIANT}
_PARAMS = {"bug": ("engine", "signatures"), "control": ("engine",), "workaround": ("engine", "workaround"),
           "variants": ("engine", "signatures", "cases")}


def _value(node: ast.AST, names: dict):
    """A literal, or a module-level name bound to one, or a sum of them (BUG + ["x"])."""
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise ValueError(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _value(node.left, names) + _value(node.right, names)
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for e in node.elts:
            out += _value(e.value, names) if isinstance(e, ast.Starred) else [_value(e, names)]
        return out
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict" and not node.args:
        return {k.arg: _value(k.value, names) for k in node.keywords}
    return ast.literal_eval(node)


def declared_checks(entry: Entry) -> Checks:
    """The entry's checks as its test_checks.py declares them, read from the source, never imported: what the
    site, scan, explain and `kb accept` need (names, kinds, engines, signatures, workarounds, tolerances).
    Running a check imports it (load_checks)."""
    path = entry.test
    if not path.is_file():
        checks = Checks(str(path))
        add_rows(checks, entry.meta.checks)
        checks.entry()
        return checks
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError) as e:
        raise KBError(path, f"cannot be read: {e}") from None
    names: dict = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = _value(node.value, names)
            except (ValueError, TypeError, SyntaxError):
                pass  # not a literal: a check's arguments may not use it
    checks = Checks(str(path))
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        for deco in fn.decorator_list:
            if not (isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute)
                    and isinstance(deco.func.value, ast.Name) and deco.func.value.id == "checks"
                    and deco.func.attr in _KINDS):
                continue
            how = deco.func.attr
            try:
                args = dict(zip(_PARAMS[how], (_value(a, names) for a in deco.args)))
                for k in deco.keywords:  # name=value, or **TOLERANCES
                    args |= {k.arg: _value(k.value, names)} if k.arg else dict(_value(k.value, names))
            except (ValueError, TypeError, SyntaxError) as e:
                raise KBError(path, f"line {deco.lineno}: checks.{how}(...) takes literals or module-level "
                                    f"constants, so that the check can be read without running it ({e})") from None
            doc = (ast.get_docstring(fn, clean=False) or "").strip()
            common = dict(engine=args.pop("engine"), needs=tuple(args.pop("needs", ())), fn=None, **args)
            if how == "variants":
                cases = common.pop("cases", None) or variant_names(checks.dir / "repro.py")
                sigs = tuple(common.pop("signatures"))
                for case in cases:
                    checks._new(Check(name=f"variant-{case}", kind=CheckKind.VARIANT, signatures=sigs, variant=case,
                                      doc=f"Variant {case!r}: {doc}".strip(": "), **common))
                continue
            if "signatures" in common:
                common["signatures"] = tuple(common["signatures"])
            checks._new(Check(name=fn.name.replace("_", "-"), kind=_KINDS[how], doc=doc, **common))
    return _with_rows(checks, entry)
