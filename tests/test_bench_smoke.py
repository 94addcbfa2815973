"""Every bench in bench/ runs on a tiny input and prints its figures, so a broken bench fails here and
not on the day someone needs its numbers. Each case runs the script as a user does (a child process
from the repository root) and looks for the lines that carry its figures. Engines run only where the
bench is about them, on the smallest input there is (a fixture entry, one small family's file).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
ARCH = BENCH / "arch"
FAMILY = "sam-neck"  # the smallest architecture family: five float exports, no quantized ones


def run(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run bench/<script> with `args` (the environment is the test's: a fixture corpus sets KB_ROOT)."""
    p = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, f"bench/{script} exited {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def bench(script: str, *args: str, timeout: float = 120) -> str:
    """Its stdout, where a bench prints its figures."""
    return run(script, *args, timeout=timeout).stdout


def figures(out: str, *patterns: str) -> list[re.Match]:
    """Each pattern matches a line of `out` (its figures, not only its words)."""
    found = []
    for pattern in patterns:
        m = re.search(pattern, out, re.M)
        assert m, f"no line matching {pattern!r} in:\n{out[-3000:]}"
        found.append(m)
    return found


def test_scan_speed(tmp_path):
    from onnx import TensorProto, helper, save

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "tiny.onnx"))
    out = bench("scan_speed.py", str(tmp_path / "tiny.onnx"), "--sizes", "1000")
    figures(out, r"^kb scan end to end on 1 models: median \d+\.\d+ s, worst \d+\.\d+ s \(tiny\.onnx\); CPU median \d+\.\d+ s, worst \d+\.\d+ s \(tiny\.onnx\)$",
            r"^\d+ entries, \d+ trigger patterns$", r"^\s+\d{3,4}\s+\d+\.\d{3}\s+\d+\.\d\s+\d+$")


def test_site_build():
    out = bench("site_build.py", "--repeat", "1", "--sizes", "1", "2", "--no-real", timeout=240)
    rows = [m.groups() for m in re.finditer(r"^synthetic\s+(\d+)\s+\d+\.\d\d\s+\d+", out, re.M)]
    assert rows == [("1",), ("2",)], out
    figures(out, r"^marginal cost per added entry \(1 -> 2\): -?\d+ ms build, -?\d+\.\d KiB index")


def test_explain_real_logs():
    out = bench("explain_real_logs.py", "--split", "tune")
    figures(out, r"^set: \d+ reports; .* issue 19's floors \(.*\): (held|below on .+)$",
            r"^== split tune: \d+ positives", r"^recall\s+\d+/\d+ \(\d+%\)$",
            r"^confident top-1\s+\d+/\d+", r"^false matches\s+\d+/\d+")


def test_coverage():
    out = bench("coverage/coverage.py")
    figures(out, r"^== draw ", r"^\s+all\s+all\s+\d+/\d+\s+\d+%")


def test_corpus_speed_and_bare_entry(fixture_entry):
    """corpus_speed runs pytest on the entry and bench/bare_entry.py on it: one fixture entry, one check."""
    fixture_entry("fake-pow-nan")
    p = run("corpus_speed.py", "--entries", "fake-pow-nan", timeout=240)
    figures(p.stdout, r"^fake-pow-nan\s+\d+\.\d\d$", r"^pytest repros/ \(cold cache\)\s+\d+\.\d\d\s+\[.*passed",
            r"^ratio corpus / bare: \d+\.\d\d")
    # bare_entry's sanity line, passed on: the check's verdict, the one `kb check` gives (a broken step runner
    # gives "error")
    figures(p.stderr, r"^sqrt reproduces$")


def test_matrix_speed():
    from kb import paths, versions

    version, envs = versions.of("mnn"), paths.state("envs", ROOT)
    if not version or not (envs / "mnn" / version / ".kb-complete").exists():
        pytest.skip(f"no cached MNN {version} environment under {envs} (kb matrix --engine mnn {version} makes one)")
    from kb.checks import load_checks
    from kb.entries import load_all

    # the MNN entry with the fewest checks: any will do, and a corpus that changes must not break this test
    mnn = [(len(c), e.slug) for e in load_all() if (c := [x for x in load_checks(e).items.values() if x.engine == "mnn"])]
    out = bench("matrix_speed.py", "--envs", str(envs), "--entry", min(mnn)[1], version, timeout=300)
    figures(out, rf"^MNN versions: 1 \({re.escape(version)}\); check runs: [1-9]\d*$",
            r"^warm \(cached envs and exports\):\s+\d+\.\d s\s+\d+\.\d\d s per check$")


# ------------------------------------------------------------------------------ the architecture bench


def test_scan_architectures():
    out = bench("scan_architectures.py", "--families", FAMILY, timeout=300)
    figures(out, r"^files: \d+ ONNX files from 1 families", r"^overall \(non-guard entries\): recall \d+/\d+",
            r"^\s+tuned families \(1\): recall",
            r"^summary: tuned: recall \d+/\d+ (\d+%|-), false alarms \d+( \(KB\d+ \d+(, KB\d+ \d+)*\))?, masked \d+; "
            r"held out: recall \d+/\d+")


REFUTED = """
import sys, types
sys.path[:0] = ["bench", "bench/arch"]
import scan_architectures as s
from kb.schema import Signature
sig = Signature(id="a-line", kind="log", pattern="a line", summary="another entry's line")
entry = types.SimpleNamespace(slug="kb-x", meta=types.SimpleNamespace(signatures=[sig]))
nan = {"onnx2ncnn": {"outcome": "nan"}}
print(s._refuted(entry, nan, {}, ["onnx2ncnn"]), s._refuted(entry, nan, {}, ["onnx2ncnn"], {"onnx2ncnn"}),
      s._refuted(entry, {"onnx2ncnn": {"outcome": "ok"}}, {}, ["onnx2ncnn"], {"onnx2ncnn"}))
"""


def test_another_entrys_log_line_masks_a_silent_failure():
    """A NaN in a run where another entry's log line shows (onnx2ncnn's "Unsupported transpose type !") may be
    that entry's: it no longer refutes this one (masked). Correct outputs still refute it."""
    p = subprocess.run([sys.executable, "-c", REFUTED], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["True", "False", "True"]


def test_label_one_file():
    """label.py's engine pipelines on one float file: each pipeline gives an outcome."""
    out = bench("arch/label.py", "--only", f"{FAMILY}.ts13", timeout=300)
    pipelines = json.loads(out)[f"{FAMILY}.ts13"]
    assert set(pipelines) == {"mnn", "mnn-allow-custom-op", "mnn-session", "mnn-quant-ema", "mnn-quant-kl",
                              "onnx2ncnn", "pnnx"}
    outcomes = {k: v["outcome"] for k, v in pipelines.items()}
    assert set(outcomes.values()) <= {"ok", "mismatch", "nan", "error", "crash", "skipped"}, outcomes
    assert outcomes["mnn"] != "skipped" and outcomes["pnnx"] != "skipped", outcomes


def test_compare_exports(tmp_path):
    # export.py is a script's module (bench/arch on sys.path): imported in a child, never into this process
    code = f"import export; export.ensure([{FAMILY!r}], quiet=True); print(export.export_dir())"
    p = subprocess.run([sys.executable, "-c", code], cwd=ARCH, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    exported = Path(p.stdout.strip().splitlines()[-1])
    old, new = tmp_path / "old", tmp_path / "new"
    for d in (old, new):
        d.mkdir()
        for f in exported.glob(f"{FAMILY}.*"):
            shutil.copy(f, d / f.name)
    out = bench("arch/compare_exports.py", str(old), str(new))
    figures(out, r"^families: 1 in old, 1 in new; same names: True$", r"^ONNX files: 5; byte-identical 5;",
            r"^same models$")
    shutil.copy(new / f"{FAMILY}.ts17.onnx", new / f"{FAMILY}.ts13.onnx")  # another graph under the same name
    p = subprocess.run([sys.executable, str(ARCH / "compare_exports.py"), str(old), str(new)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 1 and f"DIFFERS: {FAMILY}.ts13" in p.stdout, p.stdout + p.stderr


def test_search_queries(built_site):
    """The held-out search bench on its first 3 queries, typed in Chromium into the site the browser tests use."""
    pytest.importorskip("playwright.sync_api")
    if not (os.environ.get("KB_CHROMIUM") or shutil.which("chromium") or Path("/usr/bin/chromium").is_file()):
        pytest.skip("no Chromium (apt-get install chromium, or set KB_CHROMIUM)")
    out = bench("search_queries.py", "--limit", "3", "--site", str(built_site), timeout=600)
    rows = figures(out, r"^== split tune: (\d+) positives, (\d+) negatives$",
                   r"^all\s+\d+\s+\d+/\d+ \(\d+%\)\s+\d+/\d+ \(\d+%\)\s+\d+$",
                   r"^  zh\s+\d+\s+", r"^  line\s+\d+\s+", r"^negatives: \d+/\d+ put an entry first")
    assert sum(map(int, rows[0].groups())) == 2, out  # 3 queries, alternating: 2 tune, 1 report
    figures(out, r"^== split report: \d+ positives, \d+ negatives$")
    p = subprocess.run([sys.executable, str(BENCH / "search_queries.py"), "--site", str(built_site.parent)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "no built site there" in p.stderr, p.stdout + p.stderr


def test_search_ranker():
    """The learned-ranker comparison on two small query sets: both orders scored on each set held out."""
    sets = [str(BENCH.parent / "tests" / "data" / "search" / f) for f in ("queries_fresh.yaml", "queries_blind7.yaml")]
    out = bench("search_ranker.py", "--queries", *sets)
    figures(out, r"^queries_fresh\.yaml\s+\d+\s+\d+\s+\d+$", r"^queries_blind7\.yaml\s+\d+\s+\d+\s+\d+$",
            r"^all \(leave-one-set-out\)\s+\d+\s+\d+\s+\d+$",
            r"^learned on every set: \d+/\d+ top-1 .* weights line_entry=")
    p = subprocess.run([sys.executable, str(BENCH / "search_ranker.py"), "--queries", sets[0]], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "needs two query files" in p.stderr, p.stdout + p.stderr


def argmax_exports() -> None:
    """The benches read an entry's exports from the cache: made here, as `kb check` makes them (the corpus may not
    have run yet: xdist hands out this file first)."""
    from kb.artifacts import prepare
    from kb.engines import missing
    from kb.entries import load_entry

    if missing("mnn"):
        pytest.skip(missing("mnn"))
    prepare(load_entry(ROOT / "repros" / "mnn-argmax-semantics"))


def test_locate_real():
    """kb locate on one entry's reproducing MNN cases (ArgMax with select_last_index: three small models)."""
    argmax_exports()
    out = bench("locate_real.py", "--engine", "mnn", "--entry", "mnn-argmax-semantics", timeout=300)
    figures(out, r"^KB074 argmax-last\s+mnn\s+hit\s+located ArgMax", r"^\d+ cases: \d+ hit, .* median [\d.]+ s")


def test_conform_speed():
    """Two cases per engine path: the bench prints cases per second for each."""
    from kb.engines import missing

    out = bench("conform_speed.py", "--case", "test_relu", "test_triu", timeout=120)
    figures(out, *(rf"^{e}: 2 cases in [\d.]+s \(with start-up\): [\d.]+ cases/s" if not missing(e)
                   else rf"^{e}: not measured: " for e in ("mnn", "onnx2ncnn", "pnnx")))


def test_reduce_real():
    """kb reduce on the first of one entry's reproducing MNN cases (ArgMax with select_last_index: a small model)."""
    argmax_exports()
    out = bench("reduce_real.py", "--engine", "mnn", "--entry", "mnn-argmax-semantics", "--budget", "30", "--limit", "1",
                timeout=300)
    figures(out, r"^KB074 argmax-last\s+mnn\s+same\s+\d+ -> 1 ", r"^\d+ cases, \d+ reduced: median 1 nodes .* same "
                 r"signature on the saved file: 1\.0 .* median [\d.]+ s per model")


def test_locate_large():
    """kb locate and kb reduce on the smallest real-sized model (MobileNetV3-Large, 22 MB; onnx2ncnn's HardSwish)."""
    from kb.engines import missing

    if missing("onnx2ncnn") or missing("ncnn"):
        pytest.skip("onnx2ncnn or ncnn is not installed")
    out = bench("locate_large.py", "--model", "mobilenetv3-large", "--repeat", "1", timeout=900)
    figures(out, r"^mobilenetv3-large\s+21\.\d onnx2ncnn\s+[\d.]+ \(\s*[\d.]+\)\s+[\d.]+ \(\s*[\d.]+\)\s+[\d.]+ "
                 r"\(\s*[\d.]+\)\s+140 -> 1\s+yes\s+/features/features\.0/features\.0\.2/HardSwish",
            r"^over 60 s \(locate \+ reduce, wall\): .*; max [\d.]+ s wall, [\d.]+ s cpu")


def test_suite_budget(tmp_path):
    """suite_budget on a two-item JUnit XML: one test of kb's own, one corpus check whose record has one step."""
    record = json.dumps({"engine": "pnnx", "steps": [{"name": "pnnx m.pt", "duration": 0.5}]}).replace('"', "&quot;")
    (tmp_path / "run.xml").write_text(
        '<testsuites><testsuite><testcase classname="tests.test_x" name="test_a" time="2.0"/>'
        '<testcase classname="repros.some-entry.README.md" name="test_check[variant-v]" time="1.0"><properties>'
        f'<property name="kb-record" value="{record}"/></properties></testcase></testsuite></testsuites>')
    out = bench("suite_budget.py", str(tmp_path / "run.xml"))
    figures(out, r"^2 items, 3 s of item time$", r"^tests/test_x\.py\s+1\s+2\.0\s+66\.7%$",
            r"^repros: variant, pnnx\s+1\s+1\.0\s+33\.3%$", r"^pnnx\s+1\s+0\.5\s+16\.7%$",
            r"^kb's own tests 2 s \(67%\), the corpus 1 s \(33%\)$")
    p = subprocess.run([sys.executable, str(BENCH / "suite_budget.py"), str(tmp_path / "none.xml")], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 1 and "none.xml: not a JUnit XML file" in p.stderr and "Traceback" not in p.stderr
