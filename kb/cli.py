"""kb: a living knowledge base of PyTorch -> ONNX -> MNN / ncnn conversion bugs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from kb import entries as entries_mod
from kb import expectations
from kb.errors import KBError
from kb.records import RecordStore
from kb.verdicts import Verdict as V

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
err = Console(stderr=True)
out = Console()

VERDICT_STYLE = {V.REPRODUCES: "red", V.FIXED: "green", V.DIFFERS: "yellow", V.WORKS: "green", V.BROKEN: "red",
                 V.SKIPPED: "dim", V.ERROR: "bold red", V.UNAVAILABLE: "dim"}


def _select(slugs: list[str]):
    if not slugs:
        return entries_mod.load_all()
    return [entries_mod.find(s) for s in slugs]


@app.command("list")
def list_() -> None:
    """List the entries."""
    t = Table("id", "slug", "engines", "title")
    for e in entries_mod.load_all():
        t.add_row(e.meta.id, e.slug, ",".join(e.meta.engines), e.meta.title)
    out.print(t)


@app.command()
def new(
    slug: Annotated[str, typer.Argument(help="the new entry's slug, e.g. mnn-einsum-three-operands")],
    engine: Annotated[str, typer.Option(help="the engine of its first check")],
) -> None:
    """Scaffold a new entry: repros/SLUG/ with its page, reproducer and checks, to be filled in."""
    from kb.scaffold import new_entry

    folder = new_entry(slug, engine)
    print(f"created {os.path.relpath(folder)}: fill in the TODOs, then run `kb check {slug}`, "
          f"`kb accept {slug}` and `./run test`")


@app.command()
def check(
    entry: Annotated[Optional[list[str]], typer.Argument(help="entry slugs; default: all")] = None,
    engine: Annotated[Optional[str], typer.Option(help="only checks that run this engine")] = None,
    name: Annotated[Optional[str], typer.Option("--check", help="only the check with this name")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array of records")] = False,
    reuse: Annotated[bool, typer.Option(help="reuse records made in this exact environment (resume)")] = False,
) -> None:
    """Run checks, record them, and compare them with the accepted knowledge.

    Exit code: 0 all as accepted, 1 something changed or is new, 2 bad input.
    """
    from kb.checks import load_checks
    from kb.harness import run_check

    selected = _select(entry or [])
    plan = []
    for e in selected:
        for c in load_checks(e).items.values():
            if (engine is None or engine in (c.engine, *c.needs)) and (name is None or c.name == name):
                plan.append((e, c))
    if not plan:
        raise KBError(entries_mod.repo_root() / "repros", "no check matches the selection")
    from kb.artifacts import prefetch

    prefetch(list({e.slug: e for e, _ in plan}.values()))
    store = RecordStore()
    done = _recorded_here(store) if reuse else {}
    records, changed = [], 0
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err, transient=True) as progress:
        task = progress.add_task("checking", total=len(plan))
        for e, c in plan:
            progress.update(task, description=f"{e.slug} / {c.name}")
            rec = done.get((e.slug, c.name))
            if rec is None:
                rec = run_check(e, c)
                store.append(rec)
            records.append(rec)
            a = expectations.assess(rec, expectations.load(e.expected))
            changed += a.status.needs_review
            if not as_json:
                style = VERDICT_STYLE[rec.verdict]
                mark = {"expected": "", "skipped": ""}.get(a.status, f"  <- {a.status.upper()}")
                progress.console.print(f"[{style}]{rec.verdict:>10}[/] {escape(e.slug)} / {escape(c.name)} "
                                       f"({rec.engine} {rec.engine_version}){mark}")
                if a.status.needs_review or rec.verdict == V.SKIPPED:
                    progress.console.print(f"           {a.message}", style="dim", highlight=False, markup=False)
            progress.advance(task)
    if as_json:
        print(json.dumps(_rows(records), indent=1))
    else:
        err.print(f"{len(records)} checks, {changed} not as accepted; records in {store.dir}")
    raise typer.Exit(1 if changed else 0)


def _rows(records) -> list[dict]:
    keys = ("entry", "check", "kind", "engine", "engine_version", "verdict", "detail")
    return [{**{k: getattr(r, k) for k in keys}, **r.model_dump(mode="json", exclude=set(keys))} for r in records]


@app.command()
def matrix(
    engine: Annotated[str, typer.Option(help="the engine whose versions to measure (one pip installs: mnn, ncnn, pnnx, onnxruntime)")],
    version: Annotated[Optional[list[str]], typer.Argument(metavar="[VERSION]...", show_default=False,
                                                           help="versions to measure; default: every installable one")] = None,
    versions_flag: Annotated[bool, typer.Option("--versions", help="marks the start of the version list")] = False,
    since: Annotated[Optional[str], typer.Option("--from", help="lowest version")] = None,
    until: Annotated[Optional[str], typer.Option("--to", help="highest version")] = None,
    entry: Annotated[Optional[list[str]], typer.Option(help="only this entry (repeatable)")] = None,
    workers: Annotated[int, typer.Option(help="versions measured at once")] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array of records")] = False,
) -> None:
    """Run the checks against many versions of one engine, each in its own cached environment.

    Example: kb matrix --engine mnn --versions 3.0.0 3.6.1 --json
    """
    from kb import envs
    from kb import matrix as matrix_mod
    from kb.history import timelines
    from kb.versions import sort_versions, version_key

    if engine not in envs.ENGINES:
        raise KBError("kb matrix", f"--engine {engine!r}: expected one of {', '.join(envs.ENGINES)}")
    chosen = [e for e in _select(entry or []) if matrix_mod.plan([e], engine)]
    if not chosen:
        raise KBError(entries_mod.repo_root() / "repros", f"no entry has checks that run {engine}")
    if version:
        asked = sort_versions(version)
    else:
        asked, problem = envs.installable(engine)
        if problem:
            err.print(f"warning: {problem}", markup=False)
    key = version_key
    asked = [v for v in asked if (not since or key(v) >= key(since)) and (not until or key(v) <= key(until))]
    if not asked:
        raise KBError("kb matrix", f"no {engine} version to measure")
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} versions"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err, transient=True) as progress:
        records = matrix_mod.run(engine, asked, chosen, workers, progress)
    if as_json:
        print(json.dumps(_rows(records), indent=1))
        return
    lines = timelines(records, engine)
    # Versions are rows and checks numbered columns, so many versions still fit a terminal.
    for slug in dict.fromkeys(t.entry for t in lines):
        mine = [t for t in lines if t.entry == slug]
        table = Table(f"{engine}", *[f"c{i}" for i in range(1, len(mine) + 1)], title=slug, title_justify="left")
        cells = [{p.version: p.verdict for p in t.points} | t.why_unmeasured for t in mine]
        for v in asked:
            table.add_row(v, *[f"[{VERDICT_STYLE[V(c[v])]}]{V(c[v]).short}[/]" if v in c else "" for c in cells])
        out.print(table)
        for i, t in enumerate(mine, 1):
            out.print(f"  c{i} {t.check}: {escape(t.summary())}", highlight=False)
    out.print("  ".join(f"{v.short} {v.value}" for v in V if v not in (V.SKIPPED,)))


def _recorded_here(store: RecordStore) -> dict:
    """The newest record per (entry, check) made with exactly this environment's versions."""
    from kb import versions

    here = versions.environment()
    records, _ = store.read()
    return {(r.entry, r.check): r for r in records if r.versions == here and r.verdict != V.ERROR}


@app.command()
def accept(
    entry: Annotated[Optional[list[str]], typer.Argument(help="entry slugs; default: all")] = None,
    name: Annotated[Optional[str], typer.Option("--check", help="only this check")] = None,
) -> None:
    """Accept the newest recorded observations as the entries' expected results."""
    records, problems = RecordStore().read()
    for p in problems:
        err.print(f"warning: {p}")
    from kb import versions
    from kb.checks import load_checks

    for e in _select(entry or []):
        checks = load_checks(e).items
        mine, kept_out = [], 0
        for r in records:
            if r.entry != e.slug or r.check not in checks or (name is not None and r.check != name):
                continue
            # Expectations are keyed by the check's own engine version, so a record made with another
            # version of an engine it also needs (a matrix over that engine) would be misfiled.
            if any(r.versions.get(n) != versions.of(n) for n in checks[r.check].needs):
                kept_out += 1
                continue
            mine.append(r)
        if kept_out:
            err.print(f"{e.slug}: {kept_out} records made with other versions of a needed engine were kept out")
        if not mine:
            err.print(f"{e.slug}: no records to accept (run `kb check {e.slug}` first)")
            continue
        n = expectations.accept(e.expected, mine, {c.name: c.engine for c in checks.values()})
        err.print(f"{e.slug}: {n} observations accepted into {os.path.relpath(e.expected)}")


@app.command()
def scan(
    model: Annotated[str, typer.Argument(help="an ONNX model, or a torch.export program (.pt2)")],
    engine: Annotated[Optional[list[str]], typer.Option(
        "--engine", help="ENGINE==VERSION to give the status on, e.g. mnn==3.6.1 (repeatable); default: newest")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array, one object per match")] = False,
) -> None:
    """Find known problems in a model by their trigger patterns.

    Exit code: 0 none found, 1 found, 3 and up bad input (kb/match/codes.py).
    """
    from kb.match.scan import scan_command

    raise typer.Exit(scan_command(model, engine or [], as_json))


@app.command()
def explain(
    log: Annotated[Optional[str], typer.Argument(help="a log file; without it (or '-'), stdin")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array, one object per entry, best first")] = False,
) -> None:
    """Find known problems in a log (converter output, traceback, pytest failure) by their signatures.

    Exit code: 0 none found, 1 found, 3 and up bad input (kb/match/codes.py).
    """
    from kb.match.explain import explain_command

    raise typer.Exit(explain_command(log, as_json))


tools_app = typer.Typer(no_args_is_help=True, help="Engines that are not on PyPI, built from source.")
app.add_typer(tools_app, name="tools")


@tools_app.command("build")
def tools_build(
    tool: Annotated[str, typer.Argument(help="the tool to build: onnx2ncnn")] = "onnx2ncnn",
    ncnn_src: Annotated[Optional[Path], typer.Option(help="an ncnn checkout (or a folder with its tools/onnx sources and NCNN_COMMIT) to build from; default: $NCNN_SRC")] = None,
) -> None:
    """Build onnx2ncnn into .kb/tools/ (cached by the sources' hash) and print its path."""
    from kb.tools.build import COMMIT_FILE, build_onnx2ncnn

    if tool != "onnx2ncnn":
        raise KBError("kb tools build", f"unknown tool {tool!r}; known: onnx2ncnn")
    binary = build_onnx2ncnn(ncnn_src)
    print(binary)
    err.print(f"onnx2ncnn from ncnn {(binary.parent / COMMIT_FILE).read_text().strip()[:7]}", highlight=False)


site_app = typer.Typer(no_args_is_help=True, help="The documentation site.")
app.add_typer(site_app, name="site")


@site_app.command("build")
def site_build(
    site_dir: Annotated[Optional[Path], typer.Option("--site-dir", "-d", help="output folder; default: site/")] = None,
    strict: Annotated[bool, typer.Option("--strict/--no-strict", help="fail on any mkdocs warning")] = True,
) -> None:
    """Generate the pages from the entries, accepted results and records, then build the site."""
    from kb.site import build_site

    out.print(f"site built in {build_site(site_dir, strict=strict)}")


@site_app.command("serve")
def site_serve(addr: Annotated[str, typer.Option("--addr", help="host:port to serve on")] = "127.0.0.1:8000") -> None:
    """Serve the site with live reload; it rebuilds when an entry or a record changes."""
    from kb.site import serve

    serve(addr)


def main() -> None:
    try:
        code = app(standalone_mode=False)  # click returns the code of typer.Exit here
        sys.exit(code if isinstance(code, int) else 0)
    except KBError as e:
        print(f"kb: {e}", file=sys.stderr)  # plain print: one line, never wrapped
        sys.exit(e.code)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("kb: interrupted")
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 -- one line, never a traceback; KB_DEBUG=1 shows it
        if os.environ.get("KB_DEBUG"):
            raise
        if hasattr(e, "show") and hasattr(e, "exit_code"):  # click's usage errors (typer may vendor click)
            e.show()
            sys.exit(e.exit_code)
        print(f"kb: internal error: {type(e).__name__}: {e} (KB_DEBUG=1 shows the traceback)", file=sys.stderr)
        sys.exit(70)
