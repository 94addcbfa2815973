"""An entry's exported models, cached by content, with the trigger precondition enforced."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kb import paths, versions
from kb import child
from kb.compare import Outputs
from kb.entries import Entry
from kb.errors import KBError
from kb.pattern import find


class PreparationFailed(Exception):
    """The reproducer could not produce what the checks need; no engine was judged."""


@dataclass(frozen=True)
class Artifacts:
    dir: Path
    manifest: dict
    visit: Callable[[str], None] | None = None  # called with each case a check touches (kb.harness)

    def case(self, name: str) -> dict:
        if name not in self.manifest:
            raise KeyError(f"the reproducer has no case {name!r} (it has {sorted(self.manifest)})")
        if "error" in self.manifest[name]:  # this case did not export: its checks fail, the others run
            raise PreparationFailed(f"case {name!r}: {self.manifest[name]['error']}")
        if self.visit:
            self.visit(name)
        return self.manifest[name]

    def original(self, name: str) -> str:
        """The case whose torch output `name`'s engine output must match: the one it rewrites, or itself."""
        return self.manifest[name].get("rewrites") or name

    def onnx(self, name: str) -> Path:
        return self.dir / self.case(name)["onnx"]

    def inputs(self, name: str) -> Path:
        self.case(name)
        return self.dir / f"{name}.inputs.npz"

    def reference(self, name: str) -> Outputs:
        self.case(name)
        return Outputs.load(name, self.dir / f"{name}.reference.npz", "torch")

    def torch_outputs(self, name: str) -> Outputs:
        """The reference without visiting: for the harness's own comparisons."""
        return Outputs.load(name, self.dir / f"{name}.reference.npz", "torch")

    def torchscript(self, name: str) -> Path:
        return self.dir / self.case(name)["torchscript"]


# Everything the export path runs: the exporters (dynamo's onnxscript), onnxsim, onnxruntime's
# quantizer and numpy's savez; and kb's own code on that path. A change to any of them re-exports.
EXPORT_PACKAGES = ("torch", "onnx", "onnxscript", "onnxsim", "onnxruntime", "numpy")
EXPORT_CODE = ("export.py", "ways.py", "workers/onnxruntime.py")


def _key(entry: Entry) -> str:
    h = hashlib.sha256()
    repro = entry.repro.read_bytes()
    h.update(repro)
    if b"kb.blocks" in repro:  # the shared model blocks it builds from are part of what it exports
        h.update((Path(__file__).parent / "blocks.py").read_bytes())
    for name in EXPORT_CODE:
        h.update((Path(__file__).parent / name).read_bytes())
    for pkg in EXPORT_PACKAGES:
        h.update(f"{pkg}={versions.of(pkg)}".encode())
    return h.hexdigest()[:16]


_memo: dict[Path, Artifacts | PreparationFailed] = {}
_locks: dict[Path, threading.Lock] = defaultdict(threading.Lock)


def prepare(entry: Entry, timeout: float = 600) -> Artifacts:
    """Export once per reproducer content and torch/onnx versions; verify the triggers."""
    final = paths.state("cache") / entry.slug / _key(entry)
    with _locks[final]:
        if final not in _memo:
            try:
                _memo[final] = _prepare(entry, final, timeout)
            except PreparationFailed as e:
                _memo[final] = e
    if isinstance(_memo[final], PreparationFailed):
        raise _memo[final]
    return _memo[final]


WARM = ("kb.export:warm",)  # one entry's export is a fork of a Python that loaded torch (kb.forkserver): 1 s, not 5
BATCH = 6  # entries exported by one prefetch process: torch loads once per batch, checks start early


_prefetching: list[tuple[threading.Thread, threading.Event]] = []


def prefetch(entries: list[Entry]) -> None:
    """Export the entries in the background, a few per process, while the checks of earlier ones run
    on the other core. A check that needs an entry of the batch under way waits for that batch.
    `stop_prefetch()` ends it: a thread still in onnx's or torch's native code when Python exits aborts the
    process ("terminate called without an active exception")."""
    stop = threading.Event()

    def work():
        # the first alone, so the first checks start as soon as they would without batches
        for batch in [entries[:1]] + [entries[i:i + BATCH] for i in range(1, len(entries), BATCH)]:
            if stop.is_set():
                return
            finals = [paths.state("cache") / e.slug / _key(e) for e in batch]
            locks = [_locks[f] for f in dict.fromkeys(finals)]
            for lock in locks:
                lock.acquire()
            try:
                _export_batch([(e, f) for e, f in zip(batch, finals)
                               if f not in _memo and not (f / "manifest.json").is_file()])
            except Exception:  # noqa: BLE001 -- prepare() below exports each one alone
                pass
            finally:
                for lock in locks:
                    lock.release()
            for e in batch:
                try:
                    prepare(e)
                except Exception:  # noqa: BLE001 -- the check that needs it reports it
                    pass

    thread = threading.Thread(target=work, name="kb-prefetch", daemon=True)
    _prefetching.append((thread, stop))
    thread.start()


def stop_prefetch() -> None:
    """Let the background exports finish the batch under way, and start no other."""
    while _prefetching:
        thread, stop = _prefetching.pop()
        stop.set()
        thread.join()


def _export_batch(todo: list[tuple[Entry, Path]], timeout: float = 1800) -> None:
    """Export several entries in one child; each lands in its cache folder only when it succeeded."""
    if not todo:
        return
    jobs = []
    for e, final in todo:
        tmp = final.with_name(f"{final.name}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        jobs.append((final, tmp))
    child.run_function("torch export", "kb.export:export_entries", timeout=timeout,
                       jobs=[[str(e.repro), str(tmp)] for (e, _), (_, tmp) in zip(todo, jobs)],
                       shown=f"export of {len(todo)} reproducers")
    for final, tmp in jobs:
        if (tmp / "manifest.json").is_file() and not (tmp / "failed.txt").exists():
            try:
                tmp.rename(final)
            except OSError:  # another worker finished first; its copy is as good
                pass
        shutil.rmtree(tmp, ignore_errors=True)


def _prepare(entry: Entry, final: Path, timeout: float, retry: bool = True) -> Artifacts:
    if not (final / "manifest.json").is_file():
        tmp = final.with_name(f"{final.name}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        step = child.run_function("torch export", "kb.export:export_entry", timeout=timeout, preload=WARM,
                                  repro=str(entry.repro), out=str(tmp), shown=f"python {entry.repro} (export)")
        if not step.ok:
            shutil.rmtree(tmp, ignore_errors=True)
            last = [ln for ln in step.output.splitlines() if ln.strip()][-1:] or [""]
            raise PreparationFailed(f"{KBError(entry.repro, 'export failed')} ({step.fate()}): {last[0]}")
        try:
            tmp.rename(final)
        except OSError:  # another worker finished first; its copy is as good
            shutil.rmtree(tmp, ignore_errors=True)
    try:
        arts = Artifacts(final, json.loads((final / "manifest.json").read_text()))
        check_triggers(entry, arts)
    except (CorruptCache, ValueError, OSError):
        if retry:
            shutil.rmtree(final, ignore_errors=True)  # exports are reproducible: make them again
            return _prepare(entry, final, timeout, retry=False)
        raise PreparationFailed(f"{KBError(final, 'the exported models cannot be read, even after re-export')}")
    return arts


class CorruptCache(Exception):
    pass


def check_triggers(entry: Entry, arts: Artifacts) -> None:
    """Each case must contain the entry's trigger pattern, and each control case must not."""
    import onnx

    if not entry.meta.trigger:  # a user error or tool hazard that no graph pattern shows
        return
    for name, case in arts.manifest.items():
        if case.get("variant") or "error" in case:  # labelled by the engine run; or not exported (its checks say so)
            continue
        try:
            model = onnx.load(str(arts.onnx(name)), load_external_data=False)
        except Exception as e:  # truncated or overwritten cache file
            raise CorruptCache(f"{arts.onnx(name)}: {e}") from None
        matches = find(entry.meta.trigger, model)
        how = f"opset {case['opset']}, dynamo={case['dynamo']}, torch {versions.of('torch')}"
        if case["trigger"] and not matches:
            raise PreparationFailed(
                f"{entry.repro}: case {name!r} exported without the trigger pattern ({how}); "
                "the exporter may have rewritten the graph, so no engine was judged")
        if not case["trigger"] and matches:
            raise PreparationFailed(
                f"{entry.repro}: control case {name!r} contains trigger pattern "
                f"{matches[0].pattern!r} at {sorted(matches[0].nodes.values())}")
