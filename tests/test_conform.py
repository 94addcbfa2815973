"""kb conform: onnx's node-test cases through each engine path, the ledger they are accepted into, the op pages.

A handful of cases run live (a few seconds); the committed ledgers (conformance/*.yaml) are read, never rerun:
all 1,884 cases take minutes.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from kb import conform, conformance, paths
from kb.compare import Outputs
from kb.engines import missing
from kb.verdicts import Outcome, Verdict

ROOT = Path(__file__).resolve().parent.parent


def _needs(engine: str) -> None:
    problem = missing(engine) or (missing("ncnn") if engine != "mnn" else None)
    if problem:
        pytest.skip(problem)


@pytest.fixture(scope="module")
def cases():
    return conform.cases()


def _run(cases, engine: str, name: str, tmp_path: Path) -> conform.Result:
    _needs(engine)
    return conform.run_case(cases[name], engine, conform.version(engine) or "?", tmp_path / engine / name)


ONNX_PATHS = [e for e in conform.ENGINES if conformance.source(e) == "onnx"]


@pytest.mark.parametrize("engine", ONNX_PATHS)
@pytest.mark.parametrize("name", ["test_relu", "test_abs"])
def test_simple_cases_work_live(cases, engine, name, tmp_path):
    r = _run(cases, engine, name, tmp_path)
    assert r.outcome == Outcome.WORKS, r.detail
    assert r.outcome.verdict == Verdict.WORKS
    assert r.row()["verdict"] == "works" and r.row()["case"] == name and r.row()["op"] in ("Relu", "Abs")


def test_an_op_onnx2ncnn_lacks_fails_to_convert_with_its_message(cases, tmp_path):
    r = _run(cases, "onnx2ncnn", "test_gather_0", tmp_path)
    assert r.outcome == Outcome.CONVERT_FAILS
    assert "Gather not supported" in r.detail  # the converter's own line, not a guess
    assert r.outcome.verdict == Verdict.BROKEN


def test_a_wrong_result_is_wrong_values_live(cases, tmp_path):
    """onnx2ncnn reads Softmax's axis as ncnn's (batch axis dropped): it runs, and it is wrong."""
    r = _run(cases, "onnx2ncnn", "test_softmax_axis_1", tmp_path)
    assert r.outcome == Outcome.WRONG_VALUES, r.detail
    assert "leading axis is 3, not a batch of 1" in r.detail  # why, where kb knows it


def test_an_int64_input_is_not_applicable_on_ncnn_never_works(cases, tmp_path):
    case = cases["test_triu"]
    assert case.fed[0]["dtype"] == "int64"
    for engine in ("onnx2ncnn", "pnnx"):
        r = conform.run_case(case, engine, "x", tmp_path / engine)
        assert r.outcome == Outcome.NOT_APPLICABLE and "int64" in r.detail
        assert r.outcome.verdict == Verdict.SKIPPED  # never a pass
    assert not (tmp_path / "onnx2ncnn").exists()  # nothing ran


def test_a_case_kb_cannot_feed_is_reported_never_passed(cases):
    stuck = [c for c in cases.values() if c.problem]
    assert stuck, "onnx's sequence and optional cases should be there"
    r = conform.run_case(stuck[0], "mnn", "x", Path("/nonexistent"))
    assert r.outcome == Outcome.CANNOT_FEED and r.outcome.verdict == Verdict.ERROR


def _reference(case) -> Outputs:
    return Outputs.load(case.name, case.reference, "test")


@pytest.mark.parametrize("mutate, outcome", [
    (lambda a: a + 0.05 * (np.abs(a).max() + 1), Outcome.WRONG_VALUES),
    (lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, np.nan, a), Outcome.WRONG_VALUES),
    (lambda a: a[..., :-1], Outcome.WRONG_SHAPE),
    (lambda a: a, Outcome.WORKS),
])
def test_mutated_outputs_are_not_works(cases, mutate, outcome):
    """The judge on outputs made wrong on purpose: the same comparison a live run ends with."""
    case = cases["test_softmax_axis_1"]
    ref = _reference(case)
    got = Outputs(case.name, {k: mutate(v.copy()) for k, v in ref.arrays.items()}, "mutant")
    assert conform.judge(case, got)[0] == outcome


def test_integer_outputs_compare_exactly(cases):
    case = cases["test_argmax_default_axis_example"]
    ref = _reference(case)
    assert conform.tolerances(case, ref.arrays) == (0.0, 0.0)
    got = Outputs(case.name, {k: v + 1 for k, v in ref.arrays.items()}, "off by one")
    assert conform.judge(case, got)[0] == Outcome.WRONG_VALUES


def test_tolerance_follows_type_and_magnitude(cases):
    case = cases["test_softmax_axis_1"]
    atol, rtol = conform.tolerances(case, {"y": np.array([1000.0], np.float32)})
    assert rtol == 1e-3 and atol == pytest.approx(0.1)
    half = conform.Case("h", "X", "", [], [{"name": "y", "dtype": "float16", "shape": [1]}], None)
    assert conform.tolerances(half, {"y": np.array([1.0])})[1] == 1e-2


def test_shards_split_the_cases_without_overlap(cases):
    one, two = conform.select(cases, shard=(1, 2)), conform.select(cases, shard=(2, 2))
    assert len(one) + len(two) == len(cases) and not {c.name for c in one} & {c.name for c in two}
    assert {c.op for c in conform.select(cases, ops=["resize"])} == {"Resize"}


# ---------------------------------------------------------------- the ledger


def _result(case, version, outcome, detail=""):
    return {"case": case, "op": "Relu", "engine_version": version, "outcome": outcome, "detail": detail}


def test_ledger_accepts_groups_releases_and_says_what_moved(tmp_path):
    f = tmp_path / "conformance" / "mnn.yaml"
    where = conformance.Provenance(date="2026-01-01", platform="p", onnx="1.0")
    conformance.accept(f, "mnn", [_result("test_a", "3.0.0", "works"), _result("test_b", "3.0.0", "wrong values", "d"),
                                  _result("test_c", "3.0.0", "works")], where)
    conformance.accept(f, "mnn", [_result("test_a", "3.1.0", "works")], where)  # a shard of a later run
    table = conformance.load(f)
    assert set(table.cells) == {"test_a", "test_b", "test_c"}  # the other cases stay
    raw = yaml.safe_load(f.read_text())
    assert raw["cases"]["test_a"]["runs"] == [{"versions": ["3.0.0", "3.1.0"], "outcome": "works", "seen": "p1"}]
    assert len(f.read_text().splitlines()) == 3 + 1 + 2 + 1 + 3  # header, engine, provenance, cases: a line each
    # After an upgrade: fixed, regressed, the same (new release), as accepted (same release)
    assert conformance.change(table, "test_b", "3.2.0", Outcome.WORKS) == (conformance.FIXED, "3.0.0")
    assert conformance.change(table, "test_c", "3.2.0", Outcome.CRASH) == (conformance.REGRESSION, "3.0.0")
    assert conformance.change(table, "test_a", "3.2.0", Outcome.WORKS) == (conformance.NEW, "3.1.0")
    assert conformance.change(table, "test_a", "3.1.0", Outcome.WORKS) == (conformance.EXPECTED, "3.1.0")
    assert conformance.change(table, "test_b", "3.0.0", Outcome.WRONG_SHAPE)[0] == conformance.DIFFERENTLY
    assert conformance.change(table, "test_z", "3.0.0", Outcome.WORKS) == (conformance.NEW, None)


def test_ledger_keeps_no_paths_or_clocks():
    assert conformance.short("[12:01:02] /tmp/kb-x/model.onnx: Gather not supported\n") == "model.onnx: Gather not supported"


COMMITTED = [e for e in conform.ENGINES if conformance.path(ROOT, e).is_file()]


@pytest.mark.parametrize("engine", COMMITTED)
def test_committed_ledger_loads_and_covers_every_case(engine):
    index = conformance.load_cases(ROOT, conformance.source(engine))
    assert index is not None, "conformance/cases.yaml (torch-cases.yaml) is written with the ledgers"
    table = conformance.load(conformance.path(ROOT, engine), engine)
    assert table.engine == engine
    assert set(table.cells) == set(index.cases)  # every case of that onnx was measured
    newest = table.versions()[-1]
    counts: dict[str, int] = {}
    for case, per in table.cells.items():
        assert table.ops[case] == index.cases[case].op
        if newest in per:
            counts[per[newest].outcome] = counts.get(per[newest].outcome, 0) + 1
    assert sum(counts.values()) == len(index.cases)
    assert counts.get(Outcome.WORKS, 0) > 0
    # onnx's cases include inputs ncnn cannot take; torch's samples are chosen for one it can
    assert (counts.get(Outcome.NOT_APPLICABLE, 0) > 0) == (conformance.source(engine) == "onnx")
    # a case kb cannot feed is never counted as a pass
    assert all(per[newest].outcome == Outcome.CANNOT_FEED for c, per in table.cells.items() if index.cases[c].problem)


def test_committed_ledgers_exist():
    assert COMMITTED == list(conform.ENGINES)


# ---------------------------------------------------------------- op pages


def test_an_op_page_renders_from_the_ledgers():
    from kb.entries import load_all
    from kb.site import ops

    conf = ops.Conformance.load(ROOT)
    if not conf.tables:
        pytest.skip("no conformance ledger committed")
    cases = conf.ops()["Relu"]
    page = ops.op_page("Relu", cases, conf, load_all(ROOT), "1.23.2")
    assert page.startswith("---\n") and "# Relu" in page
    assert "test_relu" in page and "MNN" in page and "onnx2ncnn" in page and "pnnx" in page
    assert '<td class="kb-o kb-o-works" data-outcome="works">works</td>' in page
    gather = ops.op_page("Gather", conf.ops()["Gather"], conf, [], "1.23.2")
    assert "Gather not supported yet!" in gather  # how it fails, in the engine's words: searchable
    assert "axis=" in gather  # grouped by the node's attributes


def test_cli_prints_one_json_object_per_case():
    _needs("onnx2ncnn")
    env = {**os.environ, "KB_ROOT": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "kb", "conform", "--engine", "onnx2ncnn", "--case", "test_relu",
                        "--case", "test_triu", "--json"], capture_output=True, text=True, env=env, timeout=120,
                       check=False)
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["case"] for r in rows] == ["test_relu", "test_triu"]
    assert {k for k in rows[0]} >= {"case", "op", "engine", "engine_version", "verdict", "detail"}
    assert [r["outcome"] for r in rows] == ["works", "not applicable"]
    assert "cases/s" in p.stderr
    assert p.returncode in (0, 1), p.stderr  # 1: something not yet accepted


def test_the_site_has_an_op_page_per_op_and_an_index(fixture_corpus):
    """The site's generator writes /ops/ and /ops/<Op>/ from a corpus's conformance/ (none without it), and the
    hook serves them there."""
    import shutil

    from kb.site import generate, hooks

    assert not generate.render(fixture_corpus).op_nav  # no ledger, no op pages
    shutil.copytree(ROOT / "conformance", fixture_corpus / "conformance")
    site = generate.render(fixture_corpus)
    assert ("All ops", "ops/index.md") in site.op_nav and ("Resize", "ops/Resize.md") in site.op_nav
    # the nav: ONNX's ops and torch's in sections small enough that a page does not render every op
    from kb.site import ops

    def leaves(items):
        for item in items:
            for value in item.values():
                yield from leaves(value) if isinstance(value, list) else [value]

    tree = ops.nav_sections(site.op_nav)
    assert sorted(leaves(tree)) == sorted(f for _, f in site.op_nav)
    def widest(items):  # the most pages one list of the nav holds
        subs = [v for item in items for v in item.values() if isinstance(v, list)]
        return max([sum(not isinstance(v, list) for item in items for v in item.values()), *map(widest, subs)])

    assert [list(t) for t in tree][1:] == [["ONNX"], ["torch, through pnnx"]]
    assert widest(tree) <= 40 and len(site.op_nav) > 200
    assert 'href="Resize/"' in site.pages["ops/index.md"]
    assert "test_resize_upsample_scales_linear" in site.pages["ops/Resize.md"]

    from mkdocs.structure.files import File, Files

    hooks._SCRIPTS.clear()
    served = hooks.on_files(Files([File(f"{hooks.GENERATED}/{n}", "docs", "site", True)
                                   for n in ("ops/index.md", "ops/Resize.md")]), None)
    assert sorted(f.dest_uri for f in served) == ["ops/Resize/index.html", "ops/index.html"]


def test_after_an_upgrade_the_run_names_the_cases_fixed_and_regressed(tmp_path):
    """A ledger that accepted test_relu broken and test_abs working on an older release: the installed release
    fixes one and (here, by a doctored ledger) "regresses" none; the run says which, and --accept records it."""
    _needs("onnx2ncnn")
    (tmp_path / "repros").mkdir()
    ledger = conformance.path(tmp_path, "onnx2ncnn")
    old = conformance.Provenance(date="2020-01-01", platform="p", onnx="1.0")
    conformance.accept(ledger, "onnx2ncnn", [_result("test_relu", "0000000", "wrong values", "max abs diff 1"),
                                             _result("test_triu", "0000000", "works")], old)
    # the engines built and the exports made for the real corpus stay in use (CI sets neither variable)
    env = {**os.environ, "KB_ROOT": str(tmp_path), "KB_TOOLS": str(paths.state("tools", ROOT)),
           "KB_CACHE": str(paths.state("cache", ROOT))}
    argv = [sys.executable, "-m", "kb", "conform", "--engine", "onnx2ncnn", "--case", "test_relu", "--case", "test_triu"]
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert p.returncode == 1, p.stderr
    assert "FIXED (1):\n  test_relu: wrong values on 0000000 -> works" in p.stderr
    assert "CHANGED (1):\n  test_triu: works on 0000000 -> not applicable" in p.stderr  # a pass became no observation
    p = subprocess.run([*argv, "--accept"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    table = conformance.load(ledger)
    assert table.cells["test_relu"][conform.version("onnx2ncnn")].outcome == Outcome.WORKS
    assert table.cells["test_relu"]["0000000"].outcome == Outcome.WRONG_VALUES  # history stays
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert p.returncode == 0 and "FIXED" not in p.stderr, p.stderr  # as accepted now


@pytest.mark.skipif(not __import__("shutil").which("unshare"), reason="unshare (util-linux) is not installed")
def test_conform_needs_no_network(tmp_path):
    _needs("mnn")
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot make a network namespace here")
    p = subprocess.run(["unshare", "-rn", sys.executable, "-m", "kb", "conform", "--engine", "mnn", "--case", "test_relu",
                        "--json"], capture_output=True, text=True, env={**os.environ, "KB_ROOT": str(ROOT)}, timeout=120,
                       check=False)
    assert json.loads(p.stdout)["outcome"] == "works", p.stderr


@pytest.mark.parametrize("runs, accepted, outcome, intermittent", [
    (["works", "wrong values"], "wrong values", "wrong values", "of 2 runs, 1 gave works"),  # as accepted on a rerun
    (["works"] * 5, "wrong values", "works", ""),  # the same five times: it moved (fixed)
    (["crash", "works", "crash", "works", "crash"], "wrong values", "crash", "of 5 runs, 2 gave works, 2 gave crash"),
    (["works"], None, "works", ""),  # nothing accepted: one run
])
def test_a_case_whose_runs_disagree_is_intermittent_never_fixed_or_regressed(cases, monkeypatch, runs, accepted,
                                                                              outcome, intermittent):
    """MNN 3.6.1's mnnconvert writes a different model each process, some wrong: a case that moved is rerun."""
    left = iter(runs)
    monkeypatch.setattr(conform, "_once", lambda case, engine, v, work, timeout: conform.Result(
        case.name, case.op, engine, v, Outcome(next(left)), "d"))
    was = None if accepted is None else Outcome(accepted)
    [r] = conform.run([cases["test_relu"]], "mnn", accepted=lambda case, version: was)
    assert (r.outcome, r.intermittent) == (Outcome(outcome), intermittent)
    assert next(left, None) is None or accepted is None  # stopped at the accepted outcome, else ran them all


def test_releases_resume_where_the_ledger_stops(monkeypatch):
    from kb import envs

    monkeypatch.setattr(envs, "installable", lambda engine: (["3.0.0", "3.1.0", "3.2.0"], ""))
    todo, skipped, problem = conform.releases_to_run("mnn", "all", lambda v: v == "3.1.0")
    assert (todo, skipped, problem) == (["3.0.0", "3.2.0"], ["3.1.0"], "")
    assert conform.releases_to_run("pnnx", "20240226, 20261020", lambda v: False)[0] == ["20240226", "20261020"]
    with pytest.raises(ValueError, match="one release"):
        conform.releases_to_run("onnx2ncnn", "all", lambda v: False)


def test_an_older_release_runs_in_its_own_environment_and_lands_in_the_ledger(tmp_path):
    """`--releases` runs each release as kb matrix does (its environment first on the path) and accepts what
    that release gives under its own version; a second run skips it."""
    from kb import envs

    old = next((v for v in envs.cached("mnn") if v != conform.version("mnn")), None)
    if old is None:
        pytest.skip("no other MNN release installed (kb matrix --engine mnn installs them)")
    (tmp_path / "repros").mkdir()
    env = {**os.environ, "KB_ROOT": str(tmp_path), "KB_ENVS": str(envs.root())}
    argv = [sys.executable, "-m", "kb", "conform", "--engine", "mnn", "--case", "test_abs", "--releases", old, "--accept"]
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    cells = conformance.load(conformance.path(tmp_path, "mnn")).cells["test_abs"]
    assert list(cells) == [old] and cells[old].outcome == Outcome.WORKS
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert p.returncode == 0 and f"{old} in the ledger already" in p.stderr, p.stderr


def test_saved_json_rows_of_several_jobs_are_accepted_with_from(tmp_path):
    """The GitHub workflow's merge: each job's `kb conform --json` output, accepted in one place."""
    (tmp_path / "repros").mkdir()
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps({**_result("test_relu", "3.0.0", "works"), "engine": "mnn"}) + "\n")
    b.write_text(json.dumps({**_result("test_relu", "3.1.0", "crash", "MNN run: killed by SIGSEGV"), "engine": "mnn"})
                 + "\n")
    env = {**os.environ, "KB_ROOT": str(tmp_path)}
    p = subprocess.run([sys.executable, "-m", "kb", "conform", "--engine", "mnn", "--from", str(a), "--from", str(b)],
                       capture_output=True, text=True, env=env, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    cells = conformance.load(conformance.path(tmp_path, "mnn")).cells["test_relu"]
    assert {v: str(c.outcome) for v, c in cells.items()} == {"3.0.0": "works", "3.1.0": "crash"}
    b.write_text("not json\n")
    p = subprocess.run([sys.executable, "-m", "kb", "conform", "--engine", "mnn", "--from", str(b)],
                       capture_output=True, text=True, env=env, timeout=120, check=False)
    assert p.returncode == 2 and "line 1 is not a row of `kb conform --json`" in p.stderr and "Traceback" not in p.stderr


# ---------------------------------------------------------------- torch's op samples (the pnnx-torch path)


@pytest.fixture(scope="module")
def torch_cases(tmp_path_factory):
    """A few of torch's op samples, collected as kb conform collects them all."""
    from kb import torchcases

    root = tmp_path_factory.mktemp("torch-cases")
    torchcases.collect(root, "index.json", names={"abs", "argmax", "nn.functional.pad"})
    return {m["name"]: conform.Case(**m, dir=root / m["name"]) for m in json.loads((root / "index.json").read_text())}


def test_torch_samples_are_cases_named_as_models_spell_the_op(torch_cases):
    assert {"torch.abs-0", "torch.argmax-0", "F.pad-circular-0"} <= set(torch_cases)
    case = torch_cases["F.pad-circular-0"]
    assert case.op == "F.pad" and case.model.name == "model.pt" and case.model.is_file()
    assert "circular" in case.attrs  # the sample's arguments, which the op page groups by
    assert case.fed[0]["shape"][0] == 1  # cut to a batch of one: ncnn runs one sample at a time


def test_torch_samples_run_live_through_pnnx(torch_cases, tmp_path):
    """An op pnnx converts works; one it leaves under its torch name fails in ncnn with ncnn's own line."""
    _needs("pnnx")
    v = conform.version("pnnx-torch")
    assert v == conform.version("pnnx")  # the path's release is pnnx's
    works = conform.run_case(torch_cases["torch.abs-0"], "pnnx-torch", v, tmp_path / "abs")
    assert works.outcome == Outcome.WORKS, works.detail
    assert "torch 2." in works.detail  # compared with torch's own output
    left = conform.run_case(torch_cases["torch.argmax-0"], "pnnx-torch", v, tmp_path / "argmax")
    assert left.outcome == Outcome.RUN_FAILS and "layer torch.argmax not exists or registered" in left.detail


@pytest.mark.parametrize("mutate, outcome", [
    (lambda a: a + 0.05 * (np.abs(a).max() + 1), Outcome.WRONG_VALUES),
    (lambda a: a[..., :-1], Outcome.WRONG_SHAPE),
    (lambda a: a, Outcome.WORKS),
])
def test_a_torch_sample_judged_on_mutated_outputs_is_not_works(torch_cases, mutate, outcome):
    case = torch_cases["F.pad-circular-0"]
    ref = Outputs.load(case.name, case.reference, "test")
    got = Outputs(case.name, {k: mutate(v.copy()) for k, v in ref.arrays.items()}, "mutant")
    assert conform.judge(case, got)[0] == outcome


def test_a_torch_op_page_shows_only_its_path_and_an_onnx_page_not_it():
    from kb.site import ops

    conf = ops.Conformance.load(ROOT)
    if "pnnx-torch" not in conf.tables:
        pytest.skip("no pnnx-torch ledger committed")
    found = conf.ops()
    page = ops.op_page("torch.argmax", found["torch.argmax"], conf, [], "1.23.2")
    assert "torch op on pnnx from TorchScript" in page and "OpInfo" in page
    assert "search:\n  exclude: true" in page.split("\n---\n", 1)[0]  # out of the search box: its cost
    relu = ops.op_page("Relu", found["Relu"], conf, [], "1.23.2")
    assert "exclude" not in relu.split("\n---\n", 1)[0]
    # an ONNX op page is in the box by its name, summary and failures; its case tables are not (their cost)
    headings = [h for h in relu.splitlines() if h.startswith("## ") or h.startswith("### ")]
    cases = headings.index("## Cases by attributes { #cases data-search-exclude=\"true\" }")
    assert headings[cases + 1:] and all('data-search-exclude="true"' in h for h in headings[cases + 1:])
    assert not any("data-search-exclude" in h for h in headings[:cases])
    assert "layer torch.argmax not exists or registered" in page  # ncnn's own line: what a user pastes
    assert 'data-engine="pnnx-torch"' in page and 'data-engine="mnn"' not in page
    assert "kb conform --engine pnnx-torch --op torch.argmax" in page
    relu = ops.op_page("Relu", found["Relu"], conf, [], "1.23.2")
    assert 'data-engine="pnnx-torch"' not in relu and "ONNX op" in relu
    index, _ = ops.pages(ROOT, [], conf)
    assert "## torch ops, through pnnx" in index["ops/index.md"] and 'href="torch.argmax/"' in index["ops/index.md"]
    torch_table = index["ops/index.md"].split("## torch ops, through pnnx", 1)[1].split("</thead>", 1)[0]
    assert torch_table.count("pnnx from TorchScript") == min(2, len(conf.tables["pnnx-torch"].versions()))  # fits a phone
