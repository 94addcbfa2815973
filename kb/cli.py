"""kb: a living knowledge base of PyTorch -> ONNX -> MNN / ncnn conversion bugs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from kb import entries as entries_mod
from kb.errors import KBError
from kb.engines import NAMES as ENGINE_NAMES
from kb.verdicts import Verdict as V

# Each command imports what only it needs: `kb explain` on a one-line log must answer well under a second.

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
    """List the entries (and, after them, one line for each entry that does not load)."""
    broken: list[KBError] = []
    entries = entries_mod.load_all(broken=broken)
    w = max((len(e.slug) for e in entries), default=4)
    for e in entries:  # plain columns: a slug is an address and is never cut
        print(f"{e.meta.id}  {e.slug:<{w}}  {','.join(e.meta.engines):<16}  {e.meta.title}")
    for problem in broken:
        print(f"kb: {problem}", file=sys.stderr)  # as main() prints a KBError: one line
    if broken:
        raise typer.Exit(broken[0].code)


@app.command()
def new(
    slug: Annotated[str, typer.Argument(help="the new entry's slug, e.g. mnn-einsum-three-operands")],
    engine: Annotated[str, typer.Option(help="the engine of its first check")],
    source: Annotated[Optional[str], typer.Option("--from", help="a reduced ONNX model (kb reduce's): repro.py "
                                                                   "is written from its graph")] = None,
    id: Annotated[Optional[str], typer.Option("--id", help="the id handed out to you, e.g. KB135 "
                                                           "(default: the next free one)")] = None,
) -> None:
    """Scaffold a new entry: repros/SLUG/ with its page, reproducer and checks, to be filled in."""
    from kb.scaffold import new_entry

    if source is not None:
        from kb.locate import load_model

        load_model(source)  # one line for bad input, before anything is created
    folder = new_entry(slug, engine, id=id)
    todo: list[str] = []
    if source is not None:
        from kb.fromonnx import scaffold_from

        todo = scaffold_from(folder, source)
    left = f" (repro.py: write {', '.join(todo)} in torch)" if todo else ""
    print(f"created {os.path.relpath(folder)}: fill in the TODOs{left}, then run `kb check {slug}`, "
          f"`kb accept {slug}` and `./run test`")


@app.command()
def check(
    entry: Annotated[Optional[list[str]], typer.Argument(help="entry slugs; default: all")] = None,
    engine: Annotated[Optional[str], typer.Option(help="only checks that run this engine")] = None,
    name: Annotated[Optional[str], typer.Option("--check", help="only the check with this name")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array of records")] = False,
    reuse: Annotated[bool, typer.Option(help="reuse records made in this exact environment (resume)")] = False,
) -> None:
    """Run checks, record them, and compare them with the accepted knowledge: `pytest repros/...`, the
    checks only. Exit code: 0 all as accepted, 1 something changed or is new, 2 bad input.
    """
    import contextlib
    import tempfile

    import pytest

    from kb.entries import TEST

    selected = _select(entry or [])
    if engine is not None and engine not in ENGINE_NAMES:
        raise KBError("--engine", f"unknown engine {engine!r}; known: {', '.join(ENGINE_NAMES)}")
    with tempfile.TemporaryDirectory() as tmp:
        found = Path(tmp) / "records.json"
        # an entry whose checks are all rows has no test_checks.py: pytest collects its page instead
        args = [str(e.dir / TEST if (e.dir / TEST).is_file() else e.page) for e in selected] + [
            "-p", "no:cacheprovider", "-q", "--no-header", "--kb-no-contracts", "--kb-json", str(found), "-rfE",
            "-W", "ignore::pytest.PytestAssertRewriteWarning"]  # pytest runs in kb's own process
        args += ["-m", engine] if engine else []
        args += ["--kb-check", name] if name else []
        args += ["--kb-reuse"] if reuse else []
        with contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext():
            code = pytest.main(args)
        if code == pytest.ExitCode.NO_TESTS_COLLECTED or not found.is_file():
            raise KBError(entries_mod.repo_root() / "repros", "no check matches the selection")
        if as_json:
            print(found.read_text())
    raise typer.Exit(0 if code == pytest.ExitCode.OK else 1)


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
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.table import Table

    from kb import envs
    from kb import matrix as matrix_mod
    from kb.records import rows
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
        print(json.dumps(rows(records), indent=1))
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


@app.command()
def accept(
    entry: Annotated[Optional[list[str]], typer.Argument(help="entry slugs; default: all")] = None,
    name: Annotated[Optional[str], typer.Option("--check", help="only this check")] = None,
) -> None:
    """Accept the newest recorded observations as the entries' expected results (`pytest --kb-accept`
    accepts what one run observes)."""
    from kb.accepting import accept as fold
    from kb.records import RecordStore

    records, problems = RecordStore().read()
    for p in problems:
        err.print(f"warning: {p}")
    wanted = {e.slug for e in _select(entry or [])}
    for line in fold([r for r in records if r.entry in wanted], only=name):
        err.print(line, markup=False, highlight=False)
    for slug in sorted(wanted - {r.entry for r in records}):
        err.print(f"{slug}: no records to accept (run `kb check {slug}` first)", markup=False)


@app.command()
def conform(
    engine: Annotated[str, typer.Option(help="the engine path: mnn, onnx2ncnn (then ncnn), pnnx (from ONNX, then ncnn) "
                                             "or pnnx-torch (torch's op samples from TorchScript, then ncnn)")],
    op: Annotated[Optional[list[str]], typer.Option(help="only this op's cases, e.g. Resize (repeatable)")] = None,
    case: Annotated[Optional[list[str]], typer.Option(help="only this case, e.g. test_resize_upsample_scales_linear (repeatable)")] = None,
    shard: Annotated[Optional[str], typer.Option(help="I/N: every N-th case from the I-th, to run N processes at once")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object per case, as it finishes")] = False,
    accept: Annotated[bool, typer.Option("--accept", help="record the outcomes in conformance/ENGINE.yaml")] = False,
    timeout: Annotated[float, typer.Option(help="seconds per step (a convert, a run)")] = 60.0,
    releases: Annotated[Optional[str], typer.Option(help="all, or V1,V2: each release in its own environment, as "
                                                         "kb matrix runs it; one already in the ledger is skipped")] = None,
    again: Annotated[bool, typer.Option("--again", help="with --releases: run the releases the ledger holds too")] = False,
    from_: Annotated[Optional[list[Path]], typer.Option("--from", help="accept the rows of earlier `--json` runs "
                                                        "(one job per release, say) instead of running")] = None,
) -> None:
    """Run onnx's node-test cases (torch's op samples on pnnx-torch) through an engine's whole path and compare
    them with the accepted ones.

    Exit code: 0 all as accepted (or accepted now), 1 some case is new, fixed, regressed or fails differently,
    2 bad input.
    """
    import time

    from kb import conform as conform_mod, conformance
    from kb.versions import platform_tag, of

    if engine not in conform_mod.ENGINES:
        raise KBError("--engine", f"{engine!r}: expected one of {', '.join(conform_mod.ENGINES)}")
    from kb.engines import missing

    if problem := missing(conformance.engine_of(engine)) or (missing("ncnn") if engine != "mnn" else None):
        raise KBError("--engine", problem)
    parts = None
    if shard:
        try:
            i, n = (int(x) for x in shard.split("/"))
            assert 1 <= i <= n
        except (ValueError, AssertionError):
            raise KBError("--shard", f"{shard!r}: expected I/N with 1 <= I <= N, e.g. 1/2") from None
        parts = (i, n)
    src = conformance.source(engine)
    all_cases = conform_mod.cases(source=src)
    unknown = sorted(set(case or []) - set(all_cases))
    if unknown:
        raise KBError("--case", f"no case {unknown[0]!r} in {src} {of(src)}")
    selected = conform_mod.select(all_cases, op, case, parts)
    if not selected:
        raise KBError("kb conform", "no case matches the selection")
    ledger = conformance.path(entries_mod.repo_root(), engine)
    table = conformance.load(ledger, engine)

    def index_cases() -> None:
        """The cases' index beside the ledger (conformance/cases.yaml or torch-cases.yaml), written with it."""
        with conformance.locked(ledger):
            root = entries_mod.repo_root()
            conformance.write_cases(root, conform_mod.index(all_cases, conformance.load_cases(root, src), src), src)

    if from_:
        rows = conform_mod.saved_rows(from_, engine)
        conformance.accept(ledger, engine, rows, conformance.Provenance(
            date=time.strftime("%Y-%m-%d", time.gmtime()), platform=platform_tag(), **{src: of(src) or "?"},
            runtime=conform_mod.runtime(engine)))
        index_cases()
        err.print(f"{len(rows)} results of {len(from_)} files accepted into {os.path.relpath(ledger)}", highlight=False)
        raise typer.Exit(0)
    if releases:
        names = [c.name for c in selected]
        try:
            todo, skipped, problem = conform_mod.releases_to_run(
                engine, releases, lambda v: not again and all(v in (table.cells.get(n) or {}) for n in names))
        except ValueError as e:
            raise KBError("--releases", str(e)) from None
        if problem:
            err.print(problem, markup=False, highlight=False)
        if skipped:
            err.print(f"{engine}: {', '.join(skipped)} in the ledger already (every selected case)", highlight=False)
        argv = [*(f"--op={o}" for o in op or []), *(f"--case={c}" for c in case or []),
                *([f"--shard={shard}"] if shard else []), f"--timeout={timeout}", *(["--accept"] if accept else []),
                *(["--json"] if as_json else [])]
        worst = 0
        for v in todo:
            p = conform_mod.in_release(engine, v, argv)
            if isinstance(p, str):
                err.print(f"{engine} {v}: {p}", markup=False, highlight=False)
                worst = 2
                continue
            if as_json:
                sys.stdout.write(p.stdout)
            sys.stderr.write(p.stderr or f"{engine} {v}: exit code {p.returncode}\n")
            worst = max(worst, p.returncode)
        raise typer.Exit(worst)
    where = conformance.Provenance(date=time.strftime("%Y-%m-%d", time.gmtime()), platform=platform_tag(),
                                   **{src: of(src) or "?"}, runtime=conform_mod.runtime(engine))
    moved: dict[str, list[str]] = {}
    pending: list[dict] = []

    def accepted(case: str, version: str):
        per = table.cells.get(case) or {}
        return per[version].outcome if version in per else None

    start = time.monotonic()

    def flush() -> None:
        if accept and pending:
            conformance.accept(ledger, engine, pending, where)
            pending.clear()

    def done(r) -> None:
        if r.intermittent:
            moved.setdefault(conformance.INTERMITTENT, []).append(f"{r.case}: {r.outcome} ({r.intermittent})")
        word, base = conformance.change(table, r.case, r.engine_version, r.outcome)
        if base and word not in (conformance.EXPECTED, conformance.NEW) and \
                conformance.is_intermittent(table.cells[r.case][base]):
            moved.setdefault(conformance.INTERMITTENT, []).append(
                f"{r.case}: {r.outcome}, where {table.cells[r.case][base].outcome} was accepted: its runs disagree")
            word = conformance.INTERMITTENT
        elif word != conformance.EXPECTED:
            was = table.cells[r.case][base].outcome if base else None
            moved.setdefault(word, []).append(f"{r.case}: {was + ' on ' + base + ' -> ' if was else ''}{r.outcome}"
                                              f"{': ' + conformance.short(r.detail) if r.outcome != 'works' else ''}")
        if as_json:
            print(json.dumps({**r.row(), "change": word}), flush=True)
        row = r.row()
        if r.intermittent:  # kept in the ledger: the next run knows the case is not deterministic
            row["detail"] = f"{r.detail}; intermittent: {r.intermittent}"
        elif word == conformance.INTERMITTENT:
            row["detail"], row["intermittent"] = f"{r.detail}; intermittent: its runs disagreed before", "before"
        pending.append(row)
        if len(pending) >= 50:
            flush()

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with Progress(TextColumn(f"{engine}"), BarColumn(), TextColumn("{task.completed}/{task.total} cases"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err, transient=True,
                  disable=as_json or not err.is_terminal) as progress:
        task = progress.add_task(engine, total=len(selected))

        def each(r) -> None:
            done(r)
            progress.advance(task)

        results = conform_mod.run(selected, engine, timeout, each, accepted)
    flush()
    if accept:
        index_cases()
    elapsed = time.monotonic() - start
    counts: dict[str, int] = {}
    for r in results:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    version = results[0].engine_version if results else "?"
    err.print(f"{engine} {version}: {len(results)} cases in {elapsed:.1f}s, {len(results) / elapsed:.2f} cases/s; "
              + ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])), highlight=False)
    for word in (conformance.FIXED, conformance.REGRESSION, conformance.DIFFERENTLY, conformance.CHANGED, conformance.NEW,
                 conformance.INTERMITTENT):
        lines = moved.get(word, [])
        if lines and not as_json:
            err.print(f"{word.upper()} ({len(lines)}):", highlight=False)
            for line in lines[:50]:
                print(f"  {line}", file=sys.stderr)
            if len(lines) > 50:
                print(f"  ... and {len(lines) - 50} more", file=sys.stderr)
    if accept:
        err.print(f"accepted into {os.path.relpath(ledger)}", highlight=False)
    changed = {w for w in moved if w != conformance.INTERMITTENT}
    if changed and not accept:
        err.print(f"If this is right, record it: kb conform --engine {engine} ... --accept", highlight=False)
    raise typer.Exit(0 if accept or not changed else 1)


@app.command()
def scan(
    model: Annotated[str, typer.Argument(help="an ONNX model, or a torch.export program (.pt2)")],
    engine: Annotated[Optional[list[str]], typer.Option(
        "--engine", help="ENGINE==VERSION to answer for, e.g. mnn==3.6.1 (repeatable): lists only its problems; "
                         "default: every engine, newest")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array, one object per match")] = False,
) -> None:
    """Find known problems in a model by their trigger patterns.

    Exit code: with --engine, 1 if a problem affects a named release, else 0; without, 0 none found or only
    regression guards, 1 found; 3 and up bad input (kb/match/codes.py).
    """
    from kb.match.scan import scan_command

    raise typer.Exit(scan_command(model, engine or [], as_json))


@app.command()
def explain(
    log: Annotated[Optional[str], typer.Argument(help="a log file; without it (or '-'), stdin")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array, one object per entry, best first")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text, json or markdown (a reply to paste into an issue)")] = "text",
    engine: Annotated[Optional[list[str]], typer.Option(
        "--engine", help="ENGINE==VERSION the user runs, e.g. mnn==3.6.1; default: read from the log, else the newest")] = None,
) -> None:
    """Find known problems in a log or a report (converter output, traceback, the user's own words).

    Exit code: 0 none found, 1 found, 3 and up bad input (kb/match/codes.py).
    """
    from kb.match.report import explain_command

    if fmt not in ("text", "json", "markdown"):
        raise KBError("--format", f"{fmt!r}: expected text, json or markdown")
    raise typer.Exit(explain_command(log, as_json or fmt == "json", markdown=fmt == "markdown", engines=engine or []))


@app.command()
def locate(
    model: Annotated[str, typer.Argument(help="an ONNX model")],
    engine: Annotated[str, typer.Option("--engine", help="mnn[==VERSION], onnx2ncnn or pnnx: the path to locate the "
                                                          "failure on (the installed release)")],
    inputs: Annotated[Optional[str], typer.Option(help="an .npz with one array per model input; default: seeded "
                                                       "random")] = None,
    tol: Annotated[Optional[float], typer.Option(help="allowed difference, as a fraction of each tensor's largest "
                                                      "magnitude (at least 1); default 1e-4, 1e-3 on ncnn (fp16 storage)")] = None,
    timeout: Annotated[float, typer.Option(help="seconds for each engine step")] = 180.0,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Find the first node where an engine diverges from onnxruntime, or the smallest prefix of the graph
    that still fails to convert or run; then say whether a KB entry describes it.

    Exit code: 0 no divergence, 1 a culprit found, 3 and up bad input (kb/match/codes.py).
    """
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from kb.locate import command

    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                        transient=True) if err.is_terminal else None  # a log gets no progress lines
    raise typer.Exit(command(model, engine, inputs, as_json, tol, timeout, progress))


@app.command()
def reduce(
    model: Annotated[str, typer.Argument(help="an ONNX model")],
    engine: Annotated[str, typer.Option("--engine", help="mnn[==VERSION], onnx2ncnn or pnnx")],
    output: Annotated[str, typer.Option("-o", "--output", help="the reduced model to write (.onnx); its inputs, "
                                                                "expected outputs and report go beside it")] = "reduced.onnx",
    inputs: Annotated[Optional[str], typer.Option(help="an .npz with one array per model input; default: seeded "
                                                       "random")] = None,
    budget: Annotated[float, typer.Option(help="seconds for locating and reducing together; the smallest "
                                               "failing model found by then is kept")] = 60.0,
    tol: Annotated[Optional[float], typer.Option(help="allowed difference, as kb locate's --tol")] = None,
    timeout: Annotated[float, typer.Option(help="seconds for each engine step")] = 180.0,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Reduce a model that an engine gets wrong to the smallest ONNX model that still fails the same way
    (kb locate's culprit, then delta debugging), save it with its inputs and onnxruntime's outputs, and print
    an upstream-ready report.

    Exit code: 0 the model does not fail (nothing written), 1 a reduced model written, 3 and up bad input.
    """
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from kb.reduce import command

    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                        transient=True) if err.is_terminal else None
    raise typer.Exit(command(model, engine, output, inputs, as_json, budget, timeout, tol, progress))


tools_app = typer.Typer(no_args_is_help=True, help="Engines that are not on PyPI, built from source.")
app.add_typer(tools_app, name="tools")


@tools_app.command("build")
def tools_build(
    tool: Annotated[str, typer.Argument(help="the tool to build: onnx2ncnn, or arm64 (an emulated arm64 CPU for ncnn)")] = "onnx2ncnn",
    ncnn_src: Annotated[Optional[Path], typer.Option(help="an ncnn checkout (or a folder with its tools/onnx sources and NCNN_COMMIT) to build from; default: $NCNN_SRC")] = None,
) -> None:
    """Build onnx2ncnn into .kb/tools/ (cached by the sources' hash), or arm64's Python and ncnn wheel, and
    print the path."""
    from kb.tools.build import COMMIT_FILE, build_onnx2ncnn

    if tool == "arm64":
        from kb.tools import arm64

        for engine in arm64.WHEELS:
            print(arm64.build(engine=engine))
        return
    if tool != "onnx2ncnn":
        raise KBError("kb tools build", f"unknown tool {tool!r}; known: onnx2ncnn, arm64")
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
