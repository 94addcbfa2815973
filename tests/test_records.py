"""Records merge without loss and survive concurrent writers and torn lines."""

import multiprocessing
import shutil
from datetime import datetime, timezone

from kb.records import Record, RecordStore


def rec(i: int, check="c") -> Record:
    return Record(id=Record.new_id(), entry="e", check=check, kind="bug", engine="mnn", engine_version="3.6.1",
                  verdict="reproduces", detail=f"run {i}", versions={}, platform="p",
                  started=datetime.now(timezone.utc), duration=0.1)


def writer(directory, n):
    store = RecordStore(directory)
    for i in range(n):
        store.append(rec(i, check=f"c{i}"))


def test_concurrent_writers_lose_nothing(tmp_path):
    procs = [multiprocessing.Process(target=writer, args=(tmp_path, 200)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    records, problems = RecordStore(tmp_path).read()
    assert len(records) == 800 and problems == []


def test_a_torn_last_line_is_skipped_and_reported(tmp_path):
    store = RecordStore(tmp_path)
    store.append(rec(1))
    path = next(tmp_path.glob("*.jsonl"))
    with path.open("a") as f:
        f.write('{"id": "abc", "entry": "e", "che')  # a run killed mid-write
    records, problems = RecordStore(tmp_path).read()
    assert len(records) == 1
    assert len(problems) == 1 and path.name in problems[0]


def test_merging_stores_is_copying_files_and_dedups(tmp_path):
    a, b, merged = tmp_path / "a", tmp_path / "b", tmp_path / "merged"
    RecordStore(a).append(rec(1))
    RecordStore(b).append(rec(2))
    shutil.copytree(a, merged)
    shutil.copytree(b, merged, dirs_exist_ok=True)
    shutil.copy(next(a.glob("*.jsonl")), merged / "copied-twice.jsonl")
    records, _ = RecordStore(merged).read()
    assert sorted(r.detail for r in records) == ["run 1", "run 2"]
