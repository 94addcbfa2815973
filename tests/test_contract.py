"""`pytest repros/` end to end: outcomes a user reads at a glance, and committed files left alone."""

import hashlib
import json
import os
import subprocess
import sys

import yaml

ENTRY = "mnn-grouped-convtranspose-bn-fusion"


def pytest_run(corpus, *args):
    env = {**os.environ, "KB_ROOT": str(corpus), "KB_RECORDS": os.environ["KB_RECORDS"]}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-q",
                           str(corpus / "repros"), *args], capture_output=True, text=True, cwd=corpus, env=env)


def digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def set_expected(folder, check, **fields):
    path = folder / "expected.yaml"
    data = yaml.safe_load(path.read_text())
    data[check]["3.6.1"].update(fields)
    path.write_text(yaml.safe_dump(data))


def test_accepted_results_pass_and_nothing_committed_changes(copy_entry, corpus):
    folder = copy_entry(ENTRY)
    before = digest(folder)
    p = pytest_run(corpus)
    assert p.returncode == 0, p.stdout
    assert " passed" in p.stdout and "failed" not in p.stdout and "xfail" not in p.stdout
    assert digest(folder) == before
    assert list((corpus / ".kb" / "records").glob("*.jsonl"))  # but the run was recorded


def test_a_known_bug_now_fixed_fails_and_says_how_to_accept(copy_entry, corpus):
    folder = copy_entry(ENTRY)
    set_expected(folder, "grouped-bn", verdict="reproduces", signature="drift")
    p = pytest_run(corpus, "-k", "grouped-bn and not uneven")
    assert p.returncode == 1
    assert "FIXED: mnn-grouped-convtranspose-bn-fusion/grouped-bn was reproduces [drift]" in p.stdout
    assert f"kb accept {ENTRY} --check grouped-bn" in p.stdout


def test_still_reproducing_is_an_expected_failure_naming_the_version(copy_entry, corpus):
    copy_entry("mnn-groupnorm-unregistered-custom-op")
    p = pytest_run(corpus, "-k", "allow-custom-op")
    assert p.returncode == 0, p.stdout
    assert "XFAIL" in p.stdout and "reproduces [broadcast-error] on mnn 3.6.1" in p.stdout


def test_select_by_marker(copy_entry, corpus):
    copy_entry("mnn-groupnorm-unregistered-custom-op")
    p = pytest_run(corpus, "-m", "workaround", "--collect-only")
    assert "export-standard-ops" in p.stdout and "allow-custom-op" not in p.stdout


def test_a_reproducer_that_lost_its_trigger_judges_no_engine(copy_entry, corpus):
    folder = copy_entry(ENTRY)
    repro = folder / "repro.py"
    repro.write_text(repro.read_text().replace("DeconvBN(8, 16, groups=4)", "DeconvBN(8, 16, groups=1)"))
    p = pytest_run(corpus, "-k", "grouped-bn and not uneven")
    assert p.returncode == 1
    assert "case 'grouped-bn' exported without the trigger pattern" in p.stdout


def test_kb_check_json(copy_entry, corpus):
    copy_entry(ENTRY)
    env = {**os.environ, "KB_ROOT": str(corpus)}
    p = subprocess.run([sys.executable, "-m", "kb", "check", ENTRY, "--check", "grouped-bn", "--json"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert {"entry", "check", "kind", "engine", "engine_version", "verdict", "detail"} <= set(row)
    assert (row["entry"], row["check"], row["kind"], row["engine"]) == (ENTRY, "grouped-bn", "bug", "mnn")
    assert row["verdict"] == "fixed" and row["versions"]["torch"].startswith("2.13.0")


def test_a_corrupt_cached_model_is_exported_again(copy_entry, corpus, tmp_path):
    copy_entry(ENTRY)
    env = {**os.environ, "KB_ROOT": str(corpus), "KB_CACHE": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "kb", "check", ENTRY, "--check", "grouped-bn", "--json"]
    assert subprocess.run(argv, capture_output=True, env=env).returncode == 0
    (model,) = (tmp_path / "cache").glob("*/*/grouped-bn.onnx")
    model.write_bytes(model.read_bytes()[:100])  # truncated
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)[0]["verdict"] == "fixed"


def test_a_check_with_a_bug_is_one_line_error(copy_entry, corpus):
    folder = copy_entry(ENTRY)
    test = folder / "test_checks.py"
    test.write_text(test.read_text().replace('s.mnn.convert("grouped-bn")', 's.mnn.convert("grouped-nb")', 1))
    p = pytest_run(corpus, "-k", "grouped-bn and not uneven")
    assert p.returncode == 1
    assert "test_checks.py: check 'grouped-bn' raised KeyError" in p.stdout and "Traceback" not in p.stdout


def test_accept_keeps_out_records_made_with_another_version_of_a_needed_engine(copy_entry, corpus):
    from datetime import datetime, timezone

    from kb import versions
    from kb.records import Record, RecordStore

    folder = copy_entry("ncnn-onnx2ncnn-layernorm")
    (folder / "expected.yaml").unlink()
    here = versions.environment()

    def rec(ncnn, verdict):
        return Record(id=Record.new_id(), entry="ncnn-onnx2ncnn-layernorm", check="pnnx-onnx-permute-ln",
                      kind="workaround", engine="pnnx", engine_version=here["pnnx"], verdict=verdict, detail="",
                      versions=here | {"ncnn": ncnn}, platform="p", started=datetime.now(timezone.utc), duration=0)

    store = RecordStore(corpus / ".kb" / "records")
    store.append(rec(here["ncnn"], "works"))
    store.append(rec("1.0.20230517", "broken"))  # newer, but from a matrix over ncnn
    env = {**os.environ, "KB_ROOT": str(corpus)}
    p = subprocess.run([sys.executable, "-m", "kb", "accept"], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "1 records made with other versions of a needed engine" in p.stderr
    accepted = yaml.safe_load((folder / "expected.yaml").read_text())
    assert accepted["pnnx-onnx-permute-ln"][here["pnnx"]]["verdict"] == "works"
