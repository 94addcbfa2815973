"""`pytest repros/` end to end: outcomes a user reads at a glance, and committed files left alone.

Every test runs on fixture entries (tests/corpus), whose checks drive onnxruntime only."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "corpus"
GUARD = "fake-silu-guard"  # KB902: its bug check is fixed, as accepted
BUG = "fake-custom-op-broadcast"  # KB901: reproduces through a log signature; a workaround that works
NAN = "fake-pow-nan"  # KB903: reproduces through NaN outputs


def ort_version():
    from kb import engines

    return engines.version("onnxruntime")


def pytest_run(corpus, *args):
    env = {**os.environ, "KB_ROOT": str(corpus), "KB_RECORDS": os.environ["KB_RECORDS"]}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-q",
                           str(corpus / "repros"), *args], capture_output=True, text=True, cwd=corpus, env=env)


def kb(corpus, *args, **env):
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, text=True,
                          env={**os.environ, "KB_ROOT": str(corpus), **env})


def digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def set_expected(folder, check, **fields):
    """Change every accepted version of `check`."""
    from kb import expectations

    path = folder / "expected.yaml"
    table = expectations.load(path)
    table[check] = {v: e.model_copy(update=fields) for v, e in table[check].items()}
    expectations.write(path, table, {})


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{path} no longer contains {old!r}"
    path.write_text(text.replace(old, new, 1))


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory):
    """`pytest repros/` once over the whole fixture corpus: a guard that passes, a workaround that works,
    a bug that reproduces through a log signature and one through NaN outputs."""
    corpus = tmp_path_factory.mktemp("corpus")
    shutil.copytree(FIXTURES / "repros", corpus / "repros", ignore=shutil.ignore_patterns("__pycache__"))
    entries = [d for d in (corpus / "repros").iterdir() if (d / "README.md").is_file()]
    before = {d.name: digest(d) for d in entries}
    env = {**os.environ, "KB_ROOT": str(corpus), "KB_RECORDS": str(corpus / ".kb" / "records"),
           "KB_CACHE": str(ROOT / ".kb" / "cache")}
    # the fixtures are test doubles with no variant models: every contract but scope applies to them
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-q", "-k", "not scope",
                        str(corpus / "repros")],
                       capture_output=True, text=True, cwd=corpus, env=env)
    return p, corpus, before, {d.name: digest(d) for d in entries}


def test_accepted_results_pass_and_nothing_committed_changes(whole_run):
    p, corpus, before, after = whole_run
    assert p.returncode == 0, p.stdout
    assert "FAILED" not in p.stdout and "ERROR" not in p.stdout and " failed" not in p.stdout
    assert f"PASSED repros/{GUARD}/test_checks.py::test_check[silu]" in p.stdout  # a fixed bug stays fixed
    assert f"PASSED repros/{BUG}/test_checks.py::test_check[standard-ops]" in p.stdout  # a workaround works
    assert after == before
    assert list((corpus / ".kb" / "records").glob("*.jsonl"))  # but the run was recorded


def test_still_reproducing_is_an_expected_failure_naming_the_version(whole_run):
    p = whole_run[0]
    assert p.stdout.count("XFAIL") == 2
    assert f"reproduces [broadcast-error] on onnxruntime {ort_version()}" in p.stdout  # a log signature
    assert f"reproduces [all-nan] on onnxruntime {ort_version()}" in p.stdout  # NaN outputs


def test_a_known_bug_now_fixed_fails_and_says_how_to_accept(fixture_entry, corpus):
    folder = fixture_entry(GUARD)
    set_expected(folder, "silu", verdict="reproduces", signature="drift")
    p = pytest_run(corpus, "-k", "silu")
    assert p.returncode == 1
    assert f"FIXED: {GUARD}/silu was reproduces [drift]" in p.stdout
    assert f"kb accept {GUARD} --check silu" in p.stdout


def test_select_by_marker(fixture_corpus):
    p = pytest_run(fixture_corpus, "-m", "workaround", "--collect-only")
    assert "test_check[standard-ops]" in p.stdout
    assert "test_check[convert]" not in p.stdout and "test_check[silu]" not in p.stdout


def test_entries_are_collected_without_a_test_function(fixture_corpus):
    p = pytest_run(fixture_corpus, "--collect-only")
    assert p.returncode == 0, p.stdout
    ids = {ln.strip().removeprefix("repros/") for ln in p.stdout.splitlines() if "::" in ln}
    assert {f"{BUG}/test_checks.py::test_check[convert]", f"{BUG}/test_checks.py::test_check[standard-ops]",
            f"{NAN}/test_checks.py::test_check[sqrt]", f"{GUARD}/test_checks.py::test_check[silu]"} <= ids
    assert all(i.endswith("]") and ("/test_checks.py::test_check[" in i or "::contract[" in i) for i in ids)
    # each entry's contracts are collected with it: `pytest repros/<slug>` runs them
    assert {f"{GUARD}/test_checks.py::contract[{c}]" for c in ("explain", "scan", "page", "ledger", "scope", "answer")} <= ids


def test_a_reproducer_that_lost_its_trigger_judges_no_engine(fixture_entry, corpus):
    folder = fixture_entry(NAN)
    edit(folder / "repro.py", "if self.safe else SqrtCentred.apply(x)", "")  # the trigger case is now a control
    p = pytest_run(corpus, "-k", "sqrt")
    assert p.returncode == 1
    assert "case 'sqrt' exported without the trigger pattern" in p.stdout


def test_kb_check_json(fixture_entry, corpus):
    fixture_entry(GUARD)
    p = kb(corpus, "check", GUARD, "--check", "silu", "--json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert {"entry", "check", "kind", "engine", "engine_version", "verdict", "detail"} <= set(row)
    assert (row["entry"], row["check"], row["kind"], row["engine"]) == (GUARD, "silu", "bug", "onnxruntime")
    assert row["verdict"] == "fixed" and row["versions"]["torch"].startswith("2.13.0")


def test_kb_check_an_entry_whose_checks_are_all_rows(fixture_entry, corpus):
    """No test_checks.py: kb check (and so kb matrix, which runs it per release) collects the page."""
    folder = fixture_entry(GUARD)
    (folder / "test_checks.py").unlink()
    edit(folder / "README.md", "guard:\n", "checks:\n  - {name: silu, bug: [drift], run: onnxruntime, case: silu}\nguard:\n")
    p = kb(corpus, "check", GUARD, "--json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert (row["entry"], row["check"], row["verdict"]) == (GUARD, "silu", "fixed")


def test_a_corrupt_cached_model_is_exported_again(fixture_entry, corpus, tmp_path):
    from kb.artifacts import prepare
    from kb.entries import load_entry

    folder = fixture_entry(GUARD)
    arts = prepare(load_entry(folder))  # from the shared cache: a private copy costs no export
    cache = tmp_path / "cache"
    shutil.copytree(arts.dir, cache / GUARD / arts.dir.name)
    (model,) = cache.glob("*/*/silu.onnx")
    model.write_bytes(model.read_bytes()[:100])  # truncated
    p = kb(corpus, "check", GUARD, "--check", "silu", "--json", KB_CACHE=str(cache))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)[0]["verdict"] == "fixed"
    assert model.stat().st_size > 100  # exported again


def test_a_check_with_a_bug_is_one_line_error(fixture_entry, corpus):
    folder = fixture_entry(GUARD)
    edit(folder / "test_checks.py", 's.artifacts.onnx("silu")', 's.artifacts.onnx("sliu")')
    p = pytest_run(corpus, "-k", "silu")
    assert p.returncode == 1
    assert "test_checks.py: check 'silu' raised KeyError" in p.stdout and "Traceback" not in p.stdout


def test_a_check_that_returns_nothing_is_an_error_not_fixed(fixture_entry):
    """Every step passed but nothing was compared: no silent `fixed`."""
    from kb.checks import load_checks
    from kb.entries import load_entry
    from kb.harness import run_check

    folder = fixture_entry(GUARD)
    edit(folder / "test_checks.py", "    return s.onnxruntime.run(", "    s.onnxruntime.run(")
    checks = load_checks(load_entry(folder))
    rec = run_check(checks.entry(), checks.items["silu"])
    assert rec.verdict == "error"
    assert "test_checks.py: check 'silu' returned no outputs" in rec.detail


def test_a_check_its_engine_cannot_run_here_is_skipped_not_judged(fixture_entry):
    """A driver's Unavailable (no Vulkan device, say) is no observation: never `fixed` from a run that did not happen."""
    folder = fixture_entry(GUARD)
    edit(folder / "test_checks.py", "    return s.onnxruntime.run(",
         "    from kb.engines.base import Unavailable\n    raise Unavailable('no Vulkan device here')\n"
         "    return s.onnxruntime.run(")
    rec = _run(folder, "silu")
    assert rec.verdict == "skipped" and rec.detail == "no Vulkan device here"


def test_under_ci_a_missing_device_skips_but_a_missing_engine_fails(fixture_entry, corpus, monkeypatch):
    """CI=1 installs every engine, so a check skipped for want of one is a broken setup; a machine without a
    Vulkan device is not."""
    folder = fixture_entry(GUARD)
    edit(folder / "test_checks.py", "    return s.onnxruntime.run(",
         "    from kb.engines.base import Unavailable\n    raise Unavailable('no Vulkan device here')\n"
         "    return s.onnxruntime.run(")
    monkeypatch.setenv("CI", "1")
    monkeypatch.setenv("NCNN_SRC", str(corpus))  # CI builds onnx2ncnn: every engine counts as installed
    p = pytest_run(corpus, "-k", "silu and not contract")
    assert "1 skipped" in p.stdout and "no Vulkan device here" in p.stdout and "failed" not in p.stdout, p.stdout[-800:]
    edit(folder / "test_checks.py", '@checks.bug("onnxruntime", ["drift"])',
         '@checks.bug("onnxruntime", ["drift"], needs=["onnx2ncnn"])')
    monkeypatch.setenv("ONNX2NCNN", str(corpus / "no-such-onnx2ncnn"))
    p = pytest_run(corpus, "-k", "silu and not contract")
    assert "1 failed" in p.stdout and "CI=1, but" in p.stdout, p.stdout[-800:]


def test_accept_keeps_out_records_made_with_another_version_of_a_needed_engine(fixture_entry, corpus):
    from datetime import datetime, timezone

    from kb import versions
    from kb.records import Record, RecordStore

    folder = fixture_entry(BUG)
    # the workaround now also drives a second engine (data for this test only)
    edit(folder / "test_checks.py", '@checks.workaround("onnxruntime", "standard-ops")',
         '@checks.workaround("onnxruntime", "standard-ops", needs=["ncnn"])')
    (folder / "expected.yaml").unlink()
    here = versions.environment()

    def rec(ncnn, verdict):
        return Record(id=Record.new_id(), entry=BUG, check="standard-ops", kind="workaround", engine="onnxruntime",
                      engine_version=here["onnxruntime"], verdict=verdict, detail="",
                      versions=here | {"ncnn": ncnn}, platform="p", started=datetime.now(timezone.utc), duration=0)

    store = RecordStore(corpus / ".kb" / "records")
    store.append(rec(here["ncnn"], "works"))
    store.append(rec("1.0.20230517", "broken"))  # newer, but from a matrix over ncnn
    p = kb(corpus, "accept")
    assert p.returncode == 0 and "1 records made with other versions of a needed engine" in p.stderr
    from kb import expectations

    accepted = expectations.load(folder / "expected.yaml")
    assert accepted["standard-ops"][here["onnxruntime"]].verdict == "works"


def test_a_batch_export_gives_what_each_export_alone_gives_and_a_failure_stays_its_own(tmp_path):
    """kb.export.export_entries: one torch process for several reproducers, each as if alone."""
    from kb import child

    good = [FIXTURES / "repros" / s / "repro.py" for s in ("fake-pow-nan", "fake-silu-guard")]
    broken = tmp_path / "broken.py"
    broken.write_text("def cases():\n    raise RuntimeError('no model here')\n")
    outs = {n: tmp_path / n for n in ("a", "b", "broken", "alone")}
    for d in outs.values():
        d.mkdir()
    jobs = [[str(good[0]), str(outs["a"])], [str(broken), str(outs["broken"])], [str(good[1]), str(outs["b"])]]
    step = child.run_function("batch", "kb.export:export_entries", jobs=jobs, timeout=600)
    assert step.ok, step.output[-2000:]
    assert "no model here" in (outs["broken"] / "failed.txt").read_text()
    assert (outs["b"] / "manifest.json").is_file()  # the entry after the failure was still exported
    step = child.run_function("alone", "kb.export:export_entry", repro=str(good[1]), out=str(outs["alone"]), timeout=600)
    assert step.ok, step.output[-2000:]
    import numpy as np

    assert (outs["b"] / "manifest.json").read_text() == (outs["alone"] / "manifest.json").read_text()
    for f in sorted(outs["alone"].glob("*.npz")):  # seeded reproducers: the same inputs and references
        with np.load(f) as alone, np.load(outs["b"] / f.name) as batched:
            assert all(np.array_equal(alone[k], batched[k]) for k in alone.files), f.name


# Mutations of a workaround: each read "works" while a workaround was judged against its own output.
def _run(folder, name):
    from kb.checks import load_checks
    from kb.entries import load_entry
    from kb.harness import run_check

    checks = load_checks(load_entry(folder))
    return run_check(checks.entry(), checks.items[name])


def test_a_rewrite_that_changes_results_is_broken_before_any_engine_runs(fixture_entry):
    folder = fixture_entry(BUG)
    # the "rewrite" now drops the sign of x: a plausible slip (InstanceNorm hides a mere change of scale)
    edit(folder / "repro.py", "self.custom else x * 2.0", "self.custom else x.abs() * 2.0")
    rec = _run(folder, "standard-ops")
    assert rec.verdict == "broken" and rec.steps == []  # no engine step ran
    assert "already differs from the original 'custom-op' in torch" in rec.detail


def test_a_workaround_is_compared_with_the_original_models_output(fixture_entry):
    folder = fixture_entry(BUG)
    rec = _run(folder, "standard-ops")
    assert rec.verdict == "works" and "torch (original case 'custom-op')" in rec.detail


def test_a_workaround_on_a_control_case_that_rewrites_nothing_is_an_error(fixture_entry):
    folder = fixture_entry(BUG)
    edit(folder / "repro.py", ',\n               rewrites="custom-op")', ")")
    rec = _run(folder, "standard-ops")
    assert rec.verdict == "error" and "declare the case it replaces" in rec.detail


def test_a_case_the_exporter_refuses_fails_its_own_checks_and_the_others_run(fixture_entry):
    """A torch upgrade that breaks one case's export says so on that case's checks, never on every check."""
    folder = fixture_entry(BUG)
    edit(folder / "repro.py", 'trigger=False,\n               rewrites="custom-op")',
         'trigger=False,\n               rewrites="custom-op", export_kwargs={"no_such_option": 1})')
    rec = _run(folder, "standard-ops")
    assert rec.verdict == "error" and "case 'standard-ops'" in rec.detail and "torch.onnx.export failed" in rec.detail
    assert "no_such_option" in rec.detail
    assert _run(folder, "convert").verdict == "reproduces"  # the other case exported and is judged as ever


def test_a_rewrite_fed_other_inputs_cannot_be_exported(fixture_entry):
    folder = fixture_entry(BUG)
    edit(folder / "repro.py", 'yield Case("standard-ops", Net(False), (x,)', 'yield Case("standard-ops", Net(False), (x + 1,)')
    rec = _run(folder, "standard-ops")
    assert rec.verdict == "error" and "is fed other inputs" in rec.detail


def test_an_upgraded_exporter_package_exports_again(fixture_entry, monkeypatch):
    """onnxscript (dynamo), onnxsim and onnxruntime's quantizer are on the export path: part of the cache key."""
    from kb import artifacts, versions
    from kb.entries import load_entry

    entry = load_entry(fixture_entry(BUG))
    before = artifacts._key(entry)
    real = versions.of
    for pkg in ("onnxscript", "onnxsim", "onnxruntime"):
        monkeypatch.setattr(versions, "of", lambda name, pkg=pkg: "99.0" if name == pkg else real(name))
        assert artifacts._key(entry) != before, pkg


def test_a_change_to_the_shared_blocks_exports_again_what_builds_from_them(monkeypatch):
    """kb/blocks.py is part of what an entry that imports it exports; an entry that does not keeps its cache."""
    from kb import artifacts
    from kb.entries import load_entry

    uses, other = (load_entry(ROOT / "repros" / s) for s in ("ncnn-vulkan-fp16-overflow", "mnn-argmax-semantics"))
    before = artifacts._key(uses), artifacts._key(other)
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: real(self) + (b"#" if self.name == "blocks.py" else b""))
    assert artifacts._key(uses) != before[0]
    assert artifacts._key(other) == before[1]


def test_the_corpus_runs_under_xdist_as_ci_runs_it(fixture_corpus):
    """Markers and records cross to the controller: everything an item carries must serialize."""
    p = pytest_run(fixture_corpus, "-n", "2", "--dist", "loadfile", "-k", "not scope")  # doubles have no variants
    assert p.returncode == 0, p.stdout[-3000:]
    assert "INTERNALERROR" not in p.stdout + p.stderr


EMULATED = ("mnn-arm-fp16-avgpool-sum", "mnn-arm-fp16-rnn-loop", "ncnn-arm-fp16-softmax-packed-axis",
            "ncnn-normalize-4d-depth")  # real entries with checks on an emulated arm64 CPU (the last has one such check)


def test_the_entries_on_an_emulated_cpu_run_on_one_worker(corpus):
    """Under --dist loadfile, kb's scheduler keeps the entries whose checks run on an emulated arm64 CPU on one
    worker (each qemu server then starts once); the other files are spread as loadfile spreads them."""
    for slug in (*EMULATED, "mnn-argmax-semantics", "mnn-bool-cast-float", "_messages"):
        shutil.copytree(ROOT / "repros" / slug, corpus / "repros" / slug, ignore=shutil.ignore_patterns("__pycache__"))
    p = pytest_run(corpus, "-n", "2", "--dist", "loadfile", "-k", "ledger", "-vv")  # -q -vv: verbose
    assert p.returncode == 0, p.stdout[-3000:]
    ran = {}
    for worker, slug in re.findall(r"\[(gw\d)\].*? repros/([\w-]+)/", p.stdout):
        ran.setdefault(slug, set()).add(worker)
    assert len(ran) == 6, p.stdout[-3000:]
    assert len(set().union(*(ran[s] for s in EMULATED))) == 1, ran
    assert len(set().union(*ran.values())) == 2, ran


def test_a_resumed_run_reuses_a_record_only_while_the_entry_is_unchanged(fixture_entry, corpus):
    folder = fixture_entry(GUARD)
    records = Path(os.environ["KB_RECORDS"])

    def lines():
        return sum(len(p.read_text().splitlines()) for p in records.glob("*.jsonl")) if records.is_dir() else 0

    assert pytest_run(corpus, "-k", "not contract", "--kb-reuse").returncode == 0
    made = lines()
    assert made == 1
    assert pytest_run(corpus, "-k", "not contract", "--kb-reuse").returncode == 0
    assert lines() == made  # same environment, same entry: reused
    edit(folder / "repro.py", '"""', '"""Edited. ', )  # a changed reproducer may judge otherwise
    assert pytest_run(corpus, "-k", "not contract", "--kb-reuse").returncode == 0
    assert lines() == made + 1


@pytest.mark.parametrize("said, holds", [("7.45e-08", True), ("7.5e-08", True), ("7.54e-08", False),
                                         ("7.45e-07", False)])
def test_a_figure_in_the_prose_is_one_the_ledger_records(tmp_path, said, holds):
    """KB064's prose quotes max abs diff 7.45e-08; retyped wrong, the `figures` contract names it."""
    from kb import contracts
    from kb.entries import load_entry

    src = ROOT / "repros" / "mnn-lstm-single-output-crash"
    folder = tmp_path / "repros" / src.name
    shutil.copytree(src, folder)
    page = folder / "README.md"
    page.write_text(page.read_text().replace("(max abs diff 7.45e-08)", f"(max abs diff {said})"))
    problem = contracts.figures(load_entry(folder), None)
    assert (problem is None) == holds, problem
    assert holds or f"'max abs diff {said}'" in problem


def test_the_session_ends_the_background_exports_after_the_batch_under_way(monkeypatch, tmp_path):
    """A prefetch thread still in onnx's native code when pytest's process exits aborts it ("terminate called without
    an active exception", exit -6, once in a full run): the session's end waits for the batch under way and starts no
    other. Here every batch takes half a second, so the thread is mid-batch when the session ends."""
    import threading
    import time
    from types import SimpleNamespace

    from kb import artifacts
    from kb.pytest_plugin import pytest_sessionfinish

    batches, running = [], threading.Event()

    def slow(todo, timeout=0):
        batches.append(len(todo))
        running.set()
        time.sleep(0.5)

    monkeypatch.setattr(artifacts, "_export_batch", slow)
    monkeypatch.setattr(artifacts, "prepare", lambda e: None)
    monkeypatch.setattr(artifacts, "_key", lambda e: e.slug)
    monkeypatch.setattr(artifacts.paths, "state", lambda *a: tmp_path)
    artifacts.prefetch([SimpleNamespace(slug=f"e{i}") for i in range(13)])  # batches of 1, 6 and 6
    assert running.wait(10)
    pytest_sessionfinish(SimpleNamespace(config=SimpleNamespace(workerinput={})))  # as on an xdist worker
    assert not [t for t in threading.enumerate() if t.name == "kb-prefetch"]
    assert batches == [1]


def test_units_are_handed_out_longest_first_by_the_stored_durations(tmp_path):
    """xdist's loadfile hands out files by number of tests, most first: tests/'s slow files of few tests came last and
    ran alone at the end (a warm run's last 4 minutes). kb's scheduler hands out the longest first, as the stored
    durations say; a file not timed yet counts as a typical one. One worker runs the units in the order handed out."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "test_many.py").write_text("".join(f"def test_{i}():\n    pass\n" for i in range(6)))
    (tmp_path / "test_few.py").write_text("def test_slow():\n    pass\n")
    (tmp_path / "test_new.py").write_text("def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    (tmp_path / "tests" / "durations.json").write_text(json.dumps({"test_many.py": 3.0, "test_few.py": 90.0,
                                                                   "test_other.py": 5.0}))
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "1", "--dist", "loadfile",
                        "-v", "--kb-store-durations"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:]
    order = list(dict.fromkeys(re.findall(r"PASSED (test_\w+\.py)", p.stdout)))
    assert order == ["test_few.py", "test_new.py", "test_many.py"], p.stdout[-2000:]
    stored = json.loads((tmp_path / "tests" / "durations.json").read_text())
    assert set(stored) == {"test_many.py", "test_few.py", "test_new.py"}  # this run's units; a gone file dropped
    assert stored["test_few.py"] < 90


def test_longest_first_counts_an_untimed_unit_as_the_median():
    from kb.pytest_plugin import longest_first

    assert longest_first(["a", "new", "b", "c"], {"a": 1, "b": 5, "c": 3}) == ["b", "new", "c", "a"]
    assert longest_first(["x", "y"], {}) == ["x", "y"]
