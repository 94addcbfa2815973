"""ONNX node-test conformance (`kb conform`): onnx's own one-node cases through an engine's whole path.

The cases are `onnx.backend.test.case.node.collect_testcases` (in every onnx wheel: a model, its inputs and
the reference outputs). They are collected once per onnx release and kept under $KB_CACHE/conform/.

What kb feeds: the case's first graph input. Every other input becomes an initializer holding the case's own
value, as an exported model holds weights, shapes, scales and indices: converters need those constant (onnx2ncnn
reads Conv's weights and Resize's scales from initializers), and a model from torch has them so. So a case
tests the op as a converted model uses it, not an op fed every operand at run time.

Each engine step runs in a child (kb.child), with a timeout and a memory cap: a crash, a hang or a runaway
allocation costs only its own case. A converter is a fresh process per case; the runtimes run in forks of a warm
Python (kb.forkserver).
Paths: mnn (mnnconvert, then MNN's Module API), onnx2ncnn (onnx2ncnn, then ncnn), pnnx (pnnx from the ONNX
file, then ncnn, fed as pnnx's own *_ncnn.py feeds it), and pnnx-torch: pnnx from TorchScript, then ncnn, on
torch's own op samples instead of onnx's (kb.torchcases).

Judging (kb.verdicts.Outcome says how each reason maps to a verdict): tolerances come from the reference's type
and magnitude (`tolerances`); shapes are compared as kb.compare does, unit axes aside (ncnn has no batch axis).
"""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kb import child, paths, versions
from kb.compare import Outputs, compare
from kb.conformance import MODEL_FILE, engine_of
from kb.judge import error_line
from kb.verdicts import Outcome

ENGINES = ("mnn", "onnx2ncnn", "pnnx", "pnnx-torch")  # the engine paths; each has a ledger (kb.conformance)
STEP_TIMEOUT = 60.0
# Each step's address space, capped: a case whose run would take the machine's memory (MNN's OneHot took 19 GB)
# fails its own allocation and is a crash of its own, before the kernel's OOM killer picks any process.
STEP_MEMORY = 4 << 30
# The input types each path's runtime takes, as kb feeds them (MNN stores int64 as int32: kb.workers.mnn).
TAKES = {"mnn": {"float32", "int32", "int64", "int8", "uint8"}, "onnx2ncnn": {"float32"}, "pnnx": {"float32"},
         "pnnx-torch": {"float32"}}
NARROW = ("float8", "float4", "int4", "uint4", "int2", "uint2")  # types of onnx's newest cases no runtime here has
NCNN_DIMS = 4  # an ncnn Mat holds at most 4 axes (w, h, d, c), the batch axis of 1 aside
# onnx2ncnn's model of a tensor: axis 0 is a batch of 1, dropped; ncnn's axes are the rest. Where a case's input
# starts with another size, its axis attributes land on the wrong ncnn axis: said beside the wrong result.
NO_BATCH = "the input's leading axis is {}, not a batch of 1, and onnx2ncnn takes axis 0 for the batch"
# A converter that writes a model anyway but says it left an op out: the conversion failed.
_REFUSED = re.compile(r"not supported|not support|unsupported|not implemented", re.IGNORECASE)
INDEX = "index.json"


# ---------------------------------------------------------------- the cases


@dataclass
class Case:
    name: str
    op: str
    attrs: str  # the node's attributes, "name=value, ..." (tensors and graphs shortened)
    inputs: list[dict]  # every node input of the case: name, dtype, shape, fed (bool)
    outputs: list[dict]  # graph outputs: name, dtype, shape
    problem: str | None  # why kb cannot feed it, or None
    source: str = "onnx"  # whose case: onnx's node tests, or torch's op samples (kb.torchcases)
    dir: Path = field(default=Path("."))

    @property
    def model(self) -> Path:
        return self.dir / MODEL_FILE[self.source]

    @property
    def feed(self) -> Path:
        return self.dir / "feed.npz"

    @property
    def reference(self) -> Path:
        return self.dir / "reference.npz"

    @property
    def fed(self) -> list[dict]:
        return [i for i in self.inputs if i["fed"]]

    def meta(self) -> dict:
        return {k: getattr(self, k) for k in ("name", "op", "attrs", "inputs", "outputs", "problem", "source")}


def index(all_cases: dict[str, Case], before=None, source: str = "onnx"):
    """The cases as conformance/cases.yaml (torch-cases.yaml) keeps them (kb.conformance.CaseIndex); `before`, the
    index it replaces, keeps its cases' `disputed` notes."""
    from kb.conformance import CaseIndex, CaseInfo

    kept = {n: i.disputed for n, i in (before.cases.items() if before else ()) if i.disputed}

    def fed(c: Case) -> str:
        return ", ".join(f"{i['name']} {i['dtype']}[{','.join(map(str, i['shape']))}]" for i in c.fed)

    return CaseIndex(**{source: versions.of(source) or "?"}, cases={
        c.name: CaseInfo(op=c.op, attrs=c.attrs, fed=fed(c), problem=c.problem or "", disputed=kept.get(c.name, ""))
        for c in all_cases.values()})


def cases_dir(source: str = "onnx") -> Path:
    return paths.state("cache") / "conform" / f"{source}-{versions.of(source)}"


def cases(names: list[str] | None = None, source: str = "onnx") -> dict[str, Case]:
    """Every case of the installed onnx (or torch), by name (collected and written once, then read from the
    cache)."""
    root = cases_dir(source)
    index = root / INDEX
    if not index.is_file():
        root.mkdir(parents=True, exist_ok=True)
        with open(root / ".lock", "w") as lock:  # shards start together: one collects, the others wait
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not index.is_file():
                if source == "torch":
                    from kb import torchcases

                    torchcases.collect(root, INDEX)
                else:
                    _collect(root)
    found = {m["name"]: Case(**m, dir=root / m["name"]) for m in json.loads(index.read_text())}
    return found if names is None else {n: found[n] for n in names if n in found}


def attr_text(a) -> str:
    import onnx

    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, bytes):
        v = v.decode(errors="replace")
    elif isinstance(v, onnx.TensorProto):
        v = f"tensor{list(v.dims)}"
    elif isinstance(v, onnx.GraphProto):
        v = "graph"
    elif isinstance(v, list) and v and isinstance(v[0], bytes):
        v = [x.decode(errors="replace") for x in v]
    elif isinstance(v, float):
        v = f"{v:g}"
    text = str(v).replace(" ", "")
    return f"{a.name}={text[:40]}"


def _array(value):
    """A case's value as a numpy array (a numpy scalar, a TensorProto of a type numpy lacks), or None (a
    sequence, an optional)."""
    from onnx import TensorProto, numpy_helper

    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, TensorProto):
        try:
            return numpy_helper.to_array(value)
        except Exception:  # noqa: BLE001 -- a type this onnx cannot read back
            return None
    return None


_NUMPY_OWN = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
              "float64", "complex64", "complex128", "object"}


def _storable(a: np.ndarray) -> np.ndarray:
    """An array np.load gives back as it was: ml_dtypes' types (bfloat16, float8, int4...) as float64, their
    values exact; the case's index keeps the type's name."""
    return a if a.dtype.name in _NUMPY_OWN or a.dtype.kind in "SU" else a.astype(np.float64)


def _dtype(value) -> str:
    return value.dtype.name if isinstance(value, np.ndarray) else type(value).__name__


_EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


def _collect(root: Path) -> None:
    import onnx
    from onnx import numpy_helper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        found = collect_testcases(None)
    single = {c.name: c.model.graph.node[0].op_type for c in found if len(c.model.graph.node) == 1}
    index = []
    for c in found:
        g = c.model.graph
        base = _EXPANDED.sub("", c.name)  # test_elu_expanded_ver18: the function body of test_elu's op
        op = single.get(c.name) or single.get(base) or (g.node[0].op_type if g.node else "?")
        node = g.node[0] if len(g.node) == 1 else None
        attrs = ", ".join(attr_text(a) for a in node.attribute) if node is not None else ""
        ins, outs = c.data_sets[0] if c.data_sets else ([], [])
        bad = [_dtype(v) for v in [*ins, *outs] if _array(v) is None]
        ins, outs = [_array(v) for v in ins], [_array(v) for v in outs]
        problem = None
        if len(ins) != len(g.input) or len(outs) != len(g.output):
            problem = "the case's data does not match its graph's inputs and outputs"
        if bad:
            problem = f"a {bad[0]} input or output (sequence or optional): kb feeds tensors only"
        d = root / c.name
        d.mkdir(parents=True, exist_ok=True)
        inputs = [{"name": vi.name, "dtype": _dtype(v), "shape": list(getattr(v, "shape", [])), "fed": i == 0}
                  for i, (vi, v) in enumerate(zip(g.input, ins))]
        outputs = [{"name": vi.name, "dtype": _dtype(v), "shape": list(getattr(v, "shape", []))}
                   for vi, v in zip(g.output, outs)]
        if problem is None:
            model = onnx.ModelProto()
            model.CopyFrom(c.model)
            try:
                for vi, v in list(zip(model.graph.input, ins))[1:]:
                    model.graph.initializer.append(numpy_helper.from_array(v, vi.name))
                keep = [vi for vi in model.graph.input][:1]
                del model.graph.input[:]
                model.graph.input.extend(keep)
                onnx.save(model, str(d / "model.onnx"))
                if ins:
                    np.savez(d / "feed.npz", **{g.input[0].name: _storable(ins[0])})
                np.savez(d / "reference.npz", **{vi.name: _storable(v) for vi, v in zip(g.output, outs)})
            except Exception as e:  # noqa: BLE001 -- a value onnx cannot store as an initializer
                problem = f"kb cannot write the case's inputs as initializers: {type(e).__name__}: {e}"[:200]
        index.append(Case(c.name, op, attrs, inputs, outputs, problem).meta())
    tmp = root / f"{INDEX}.tmp"
    tmp.write_text(json.dumps(index))
    tmp.replace(root / INDEX)


def select(all_cases: dict[str, Case], ops: list[str] | None = None, names: list[str] | None = None,
           shard: tuple[int, int] | None = None) -> list[Case]:
    """The cases asked for, in name order; a shard (i of n, from 1) takes every n-th from the i-th."""
    chosen = sorted(all_cases.values(), key=lambda c: c.name)
    if ops:
        wanted = {o.lower() for o in ops}
        chosen = [c for c in chosen if c.op.lower() in wanted]
    if names:
        chosen = [c for c in chosen if c.name in set(names)]
    if shard:
        i, n = shard
        chosen = chosen[i - 1::n]
    return chosen


# ---------------------------------------------------------------- judging


FLOAT_RTOL = {"float64": 1e-3, "float32": 1e-3, "float16": 1e-2, "bfloat16": 1e-2}  # else (float8, float4): 0.125


def tolerances(case: Case, reference: dict[str, np.ndarray]) -> tuple[float, float]:
    """(atol, rtol) for a case, from its outputs' types (the index's: the stored arrays of narrow float types are
    float64) and the reference's magnitude. Integers and booleans exactly. Floats: float32 and float64 to 1e-3
    relative and 1e-4 of the largest finite magnitude (at least 1e-4) absolute, as an engine's own approximations
    (exp, division by a reciprocal) are fine there and a wrong index, axis or formula is far outside; float16 and
    bfloat16 ten times looser; float8 and float4 to their own precision (3 mantissa bits: 1/8)."""
    kinds = [o["dtype"] for o in case.outputs]
    floats = [k for k in kinds if k.startswith(("float", "bfloat"))]
    if not floats:
        return 0.0, 0.0
    rtol = max(FLOAT_RTOL.get(k, 0.125) for k in floats)
    mags = [np.abs(a.astype(np.float64)) for a in reference.values() if a.dtype.kind in "fiub"]
    scale = max((float(m[np.isfinite(m)].max()) for m in mags if np.isfinite(m).any()), default=1.0)
    return 0.1 * rtol * max(1.0, scale), rtol


def not_applicable(case: Case, engine: str) -> str | None:
    """Why the engine's runtime cannot take the case's inputs, or None."""
    takes = TAKES[engine]
    for o in case.outputs:
        if o["dtype"].startswith(NARROW):
            return f"output {o['name']!r} is {o['dtype']}: no engine path here has that type"
    for i in case.fed:
        if i["dtype"] not in takes:
            return f"input {i['name']!r} is {i['dtype']}: {engine}'s path takes {', '.join(sorted(takes))} inputs"
    if engine != "mnn":
        if not case.fed:
            return "the case has no input: ncnn runs a net from an input blob"
        for i in case.fed:
            rank = len(i["shape"]) - (1 if i["shape"][:1] == [1] and len(i["shape"]) > 1 else 0)
            if rank == 0:
                return f"input {i['name']!r} is a scalar: an ncnn Mat has at least one axis"
            if rank > NCNN_DIMS:
                return f"input {i['name']!r} has shape {i['shape']}: an ncnn Mat holds at most {NCNN_DIMS} axes besides a batch of 1"
    return None


@dataclass
class Result:
    case: str
    op: str
    engine: str
    engine_version: str
    outcome: Outcome
    detail: str
    duration: float = 0.0
    intermittent: str = ""  # where reruns disagreed (`run`): what the other runs gave

    def row(self) -> dict:
        """As `kb conform --json` prints it."""
        return {"case": self.case, "op": self.op, "engine": self.engine, "engine_version": self.engine_version,
                "verdict": str(self.outcome.verdict), "outcome": str(self.outcome), "detail": self.detail,
                "intermittent": self.intermittent, "duration": round(self.duration, 3)}


# onnx2ncnn's closing advice to use pnnx, printed on every run: never the message of a failure
_BANNER = re.compile(r"onnx2ncnn may not fully meet your needs.*?please refer to https://github.com/pnnx/pnnx\s*",
                     re.DOTALL)


def _message(output: str) -> str:
    return error_line(_BANNER.sub("", output))


def _failed(step: child.StepResult, convert: bool) -> tuple[Outcome, str] | None:
    """How a step failed, or None if it did not."""
    if step.timed_out:
        return Outcome.TIMEOUT, f"{step.name}: {step.fate()}"
    if step.signal:
        return Outcome.CRASH, f"{step.name}: {step.fate()}: {_message(step.output)}"
    if step.returncode != 0 or step.missing:
        kind = Outcome.CONVERT_FAILS if convert else Outcome.RUN_FAILS
        return kind, f"{step.name}: {step.fate()}: {_message(step.output)}"
    return None


def _produced(step: child.StepResult, *files: Path) -> child.StepResult:
    if step.returncode == 0:
        step.missing = [f.name for f in files if not f.is_file() or f.stat().st_size == 0 and f.suffix != ".bin"]
    return step


def _refused(step: child.StepResult) -> str | None:
    """The line where a converter that exited 0 says it left an op out."""
    for line in step.output.splitlines():
        if _REFUSED.search(line):
            return line.strip()[:300]
    return None


def version(engine: str) -> str | None:
    from kb.engines import version as engine_version

    return engine_version(engine_of(engine))


def runtime(engine: str) -> str:
    """The runtime a converter's output runs on, where it is another engine."""
    return "" if engine == "mnn" else f"ncnn {versions.of('ncnn')}"


def run_case(case: Case, engine: str, engine_version: str, work: Path, timeout: float = STEP_TIMEOUT) -> Result:
    start = time.monotonic()
    outcome, detail = _run(case, engine, work, timeout)
    return Result(case.name, case.op, engine, engine_version, outcome, detail, time.monotonic() - start)


def _run(case: Case, engine: str, work: Path, timeout: float) -> tuple[Outcome, str]:
    if case.problem:
        return Outcome.CANNOT_FEED, case.problem
    why = not_applicable(case, engine)
    if why:
        return Outcome.NOT_APPLICABLE, why
    work.mkdir(parents=True, exist_ok=True)
    out = work / "out.npz"
    names = [o["name"] for o in case.outputs]
    if engine == "mnn":
        from kb.engines.mnn import WARM, convert_step

        dst = work / "model.mnn"
        # A fresh process per conversion, never a fork of a warm one: mnnconvert's output depends on the process
        # (MNN 3.6.1 writes a different file each run, some wrong), and forks of one server all share one fate.
        step = _produced(convert_step(case.model, dst, timeout=timeout, memory=STEP_MEMORY), dst)
        if failed := _failed(step, convert=True):
            return failed
        feed = case.feed if case.fed else _empty_feed(work)
        step = _produced(child.run_function("MNN run", "kb.workers.mnn:run_typed", model=str(dst), feed=str(feed),
                                            out=str(out), outputs=names, preload=WARM, timeout=timeout,
                                            memory=STEP_MEMORY), out)
    else:
        from kb.engines.ncnn import WARM
        from kb.workers.ncnn import LEADING

        if engine == "onnx2ncnn":
            from kb.engines.onnx2ncnn import convert_step

            param, bin = work / "model.param", work / "model.bin"
            step = _produced(convert_step(case.model, param, bin, timeout=timeout, memory=STEP_MEMORY), param, bin)
            blobs_in, blobs_out = [i["name"] for i in case.fed], dict(zip(names, names))
            axes_in, axes_out = [LEADING] * len(blobs_in), [LEADING] * len(blobs_out)
        else:
            from kb.engines.pnnx import convert_step, feeding, script_for

            shapes = ["[" + ",".join(str(d) for d in i["shape"]) + "]" for i in case.fed]
            step, param, bin = convert_step(case.model, work / "pnnx", shapes, timeout=timeout,
                                             memory=STEP_MEMORY)
            _produced(step, param, bin)
            how = feeding(param) if param.is_file() else None
            if how is not None:
                blobs_in, axes_in = list(how.inputs), list(how.inputs.values())
                blobs_out = dict(zip(how.outputs, names))
                axes_out = [how.outputs[b] for b in blobs_out]
            elif not step.missing and step.returncode == 0:
                step.missing = [f"{script_for(param).name} (how pnnx feeds its blobs)"]
        if failed := _failed(step, convert=True):
            return failed
        if refused := _refused(step):
            return Outcome.CONVERT_FAILS, f"{step.name}: {refused}"
        step = _produced(child.run_function("ncnn run", "kb.workers.ncnn:run", param=str(param), bin=str(bin),
                                            feed=str(case.feed), out=str(out), blobs_in=blobs_in, blobs_out=blobs_out,
                                            axes_in=axes_in, axes_out=axes_out, preload=WARM, timeout=timeout,
                                            memory=STEP_MEMORY), out)
    if failed := _failed(step, convert=False):
        return failed
    try:
        outcome, detail = judge(case, Outputs.load(case.name, out, engine))
    except Exception as e:  # noqa: BLE001 -- kb's own shortcoming on this case: it must not stop the others
        return Outcome.CANNOT_FEED, f"kb could not compare the outputs: {type(e).__name__}: {e}"[:300]
    lead = case.fed[0]["shape"][:1] if case.fed else []
    if engine == "onnx2ncnn" and outcome.wrong and lead and lead != [1]:
        detail += f"; {NO_BATCH.format(lead[0])}"
    return outcome, detail


def _empty_feed(work: Path) -> Path:
    path = work / "empty.npz"
    np.savez(path)
    return path


def judge(case: Case, got: Outputs) -> tuple[Outcome, str]:
    """A completed run's outcome against the case's reference outputs."""
    ref = Outputs.load(case.name, case.reference, f"{case.source} {versions.of(case.source)} reference")
    if any(v.dtype.kind not in "fiub" for v in ref.arrays.values()):
        return Outcome.CANNOT_FEED, "a string output: kb compares numbers only"
    bad = [k for k, v in got.arrays.items() if v.dtype.kind not in "fiub"]
    if bad:
        return Outcome.WRONG_VALUES, f"output {bad[0]!r} is not numeric ({got.arrays[bad[0]].dtype})"
    atol, rtol = tolerances(case, ref.arrays)
    c = compare(got, ref, atol=atol, rtol=rtol)
    if c.close:
        return Outcome.WORKS, c.describe()
    return (Outcome.WRONG_SHAPE if c.shape_differs else Outcome.WRONG_VALUES), c.describe()


RERUNS = 4  # more runs of a case whose outcome is not the accepted one, before it counts as moved


def run(selected: list[Case], engine: str, timeout: float = STEP_TIMEOUT, on_result=None,
        accepted=None) -> list[Result]:
    """Run the cases one after another, each in its own work folder (removed after), calling `on_result`.

    `accepted(case name, version)`: the outcome accepted for it, or None. Some cases are not deterministic: MNN
    3.6.1's mnnconvert writes a different file on every run, and a few Attention expansions come out wrong in
    about one run of three; its LSTM crashes now and then. So a case whose outcome is not the accepted one runs
    up to RERUNS more times. Where a run gives the accepted outcome, the result is that one, marked `intermittent`
    with what the other runs gave: never a fix or a regression. Where the runs disagree among themselves without
    it, the result is the failure seen most, marked the same way (a path that fails one run in three is broken)."""
    v = version(engine) or "?"
    results = []
    with tempfile.TemporaryDirectory(prefix=f"kb-conform-{engine}-") as tmp:
        for case in selected:
            r = _once(case, engine, v, Path(tmp) / case.name, timeout)
            was = accepted(case.name, v) if accepted else None
            if was is not None and r.outcome != was and r.outcome not in (Outcome.NOT_APPLICABLE, Outcome.CANNOT_FEED):
                r = _confirm(r, was, case, engine, v, Path(tmp), timeout)
            results.append(r)
            if on_result:
                on_result(r)
    return results


def _confirm(first: Result, was: Outcome, case: Case, engine: str, v: str, tmp: Path, timeout: float) -> Result:
    seen = [first]
    for i in range(RERUNS):
        seen.append(_once(case, engine, v, tmp / f"{case.name}.{i}", timeout))
        if seen[-1].outcome == was:
            break
    outcomes = [o.outcome for o in seen]
    if len(set(outcomes)) == 1:
        return first  # the same every time: it moved
    if was in outcomes:
        chosen = seen[outcomes.index(was)]
    else:
        failures = [o for o in outcomes if o != Outcome.WORKS]
        worst = max(set(failures), key=failures.count)
        chosen = seen[outcomes.index(worst)]
    others = [o for o in seen if o is not chosen]
    counts: dict[str, int] = {}
    for o in others:
        counts[o.outcome] = counts.get(o.outcome, 0) + 1
    chosen.intermittent = f"of {len(seen)} runs, " + ", ".join(f"{n} gave {k}" for k, n in counts.items())
    chosen.duration = sum(o.duration for o in seen)
    return chosen


def _once(case: Case, engine: str, version: str, work: Path, timeout: float) -> Result:
    r = run_case(case, engine, version, work, timeout)
    shutil.rmtree(work, ignore_errors=True)
    return r


def releases_to_run(engine: str, wanted: str, done) -> tuple[list[str], list[str], str]:
    """The releases `--releases` names ("all": every installable one), minus those whose ledger holds every
    selected case already (`done(version)`): a run over releases resumes where it stopped. Returns (to run,
    skipped, a problem line)."""
    from kb import envs
    from kb.engines import ENGINES as REGISTRY

    engine = engine_of(engine)
    if not REGISTRY[engine].matrix:
        raise ValueError(f"{engine} is built from source here: it has one release, the installed one")
    problem = ""
    if wanted == "all":
        listed, problem = envs.installable(engine)
    else:
        listed = [v.strip() for v in wanted.split(",") if v.strip()]
    return [v for v in listed if not done(v)], [v for v in listed if done(v)], problem


def in_release(engine: str, release: str, argv: list[str], timeout: float = 6 * 3600):
    """`kb conform argv` with `engine==release` first on the path, in its own environment as `kb matrix` runs
    one (kb.envs); returns the finished process, or a problem line where the release cannot run."""
    import os
    import subprocess
    import sys

    from kb import child, envs

    env = envs.ensure(engine_of(engine), release)
    if env.path is None:
        return env.problem
    return subprocess.run([sys.executable, "-m", "kb", "conform", "--engine", engine, *argv], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": envs.python_path(env)},
                          preexec_fn=child.dies_with_parent)  # noqa: PLW1509 -- one prctl, no lock


def saved_rows(files: list[Path], engine: str) -> list[dict]:
    """The rows `kb conform --json` printed into `files`, for one engine; a line that is not one is one error."""
    from kb.errors import KBError

    rows = []
    for f in files:
        try:
            lines = [ln for ln in f.read_text().splitlines() if ln.strip()]
        except OSError as e:
            raise KBError(f, f"cannot read it ({e.strerror})") from None
        for i, ln in enumerate(lines, 1):
            try:
                row = json.loads(ln)
                assert {"case", "op", "engine", "engine_version", "outcome", "detail"} <= set(row)
                Outcome(row["outcome"])
            except (ValueError, AssertionError, TypeError):
                raise KBError(f, f"line {i} is not a row of `kb conform --json`") from None
            if row["engine"] != engine:
                raise KBError(f, f"line {i} is a result of {row['engine']}, not {engine}")
            rows.append(row)
    return rows
