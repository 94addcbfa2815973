"""`kb locate MODEL.onnx --engine E`: the node where an engine first goes wrong, and whether the KB knows it.

1. onnxruntime runs the model with every intermediate tensor as a graph output: the reference.
2. The engine converts the model and its runtime reads every tensor it kept under its ONNX name (MNN: the
   names the .mnn keeps; onnx2ncnn: the blobs named after ONNX tensors; pnnx renames its blobs, so its
   graph inputs and outputs are mapped by position and its other blobs by value, see `_by_value`).
3. In topological order, the first node whose output diverges beyond a tolerance (`tolerance`) is the
   culprit; tensors downstream of it are not looked at, and a node whose output cannot be read is fine
   when something computed from it agrees. Unreadable nodes between the last agreeing one and the culprit
   are listed as suspects: the divergence may start in one of them.
4. Where converting, loading or running fails (an error, a signal, a timeout), the graph is cut with
   onnx.utils.Extractor into prefixes (the first k nodes in topological order) and bisected: the smallest
   prefix that still fails the same way (same step and signal, or the same first error line; loading, any
   layer it cannot load, see Fate.fails_like) ends at the culprit.
5. The KB's trigger patterns (each entry's `trigger`) run on the culprit and its direct neighbours.

Every engine step runs in a child process with a timeout (kb.child); the child side is kb.workers.locate.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kb import child
from kb.errors import KBError
from kb.export import save_onnx
from kb.logs import error_line, steady
from kb.match import codes

if TYPE_CHECKING:
    import onnx

ENGINES = ("mnn", "onnx2ncnn", "pnnx")
FLOAT_TYPES = (1, 10, 11, 16)  # onnx.TensorProto FLOAT, FLOAT16, DOUBLE, BFLOAT16
STEP_TIMEOUT = 180.0  # seconds for one engine step (a convert, a run)
TOL = 1e-4  # see tolerance()
# ncnn, by default, stores weights and activations as fp16 where the CPU converts them in hardware (x86 F16C,
# ARMv8.2): InnerProduct on this machine already differs by 3e-4 of the magnitude. fp16 keeps 11 significant
# bits, 4.9e-4 relative per rounding, so ncnn's paths get 1e-3.
ENGINE_TOL = {"mnn": TOL, "onnx2ncnn": 1e-3, "pnnx": 1e-3}
CONFIRMS = 5  # divergent intermediate tensors re-read alone before one is believed
WORKER = "kb.workers.locate"
Say = Callable[[str], None]


# ---------------------------------------------------------------------------------------------- the graph

@dataclass
class Graph:
    """The main graph of a model, indexed: nodes in topological order (ONNX requires it), who produces and
    who consumes each tensor, and each node's ancestors as a bit set."""

    model: onnx.ModelProto
    path: Path
    nodes: list = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # as kb.pattern names nodes: name, else Op#index
    producer: dict[str, int] = field(default_factory=dict)
    consumers: dict[str, list[int]] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)  # fed by the user (initializers are not)
    outputs: list[str] = field(default_factory=list)
    consts: set[str] = field(default_factory=set)  # initializers and Constant outputs
    anc: list[int] = field(default_factory=list)  # node i -> bit set of the nodes it depends on
    _live: list[bool] | None = None
    external: set[str] = field(default_factory=set)  # the external data files the model file names
    outside: set[str] = field(default_factory=set)  # the initializers the model file keeps in them
    view: onnx.ModelProto | None = None  # the model as its file states it (external tensors unread), as kb scan reads it

    @classmethod
    def of(cls, model: onnx.ModelProto, path: Path) -> Graph:
        g = cls(model, path)
        g.nodes = list(model.graph.node)
        g.names = [n.name or f"{n.op_type}#{i}" for i, n in enumerate(g.nodes)]
        g.consts = {t.name for t in model.graph.initializer}
        g.inputs = [i.name for i in model.graph.input if i.name not in g.consts]
        g.outputs = [o.name for o in model.graph.output]
        for i, n in enumerate(g.nodes):
            bits = 0
            for t in n.input:
                g.consumers.setdefault(t, []).append(i)
                if t in g.producer:
                    p = g.producer[t]
                    bits |= g.anc[p] | (1 << p)
            g.anc.append(bits)
            for t in n.output:
                if t:
                    g.producer[t] = i
                    if n.op_type == "Constant":
                        g.consts.add(t)
        return g

    def computed(self, i: int) -> bool:
        """Node i computes from the model's inputs (not a Constant, nor a node of constants only)."""
        if self._live is None:
            live: list[bool] = []
            for n in self.nodes:
                live.append(n.op_type != "Constant" and any(
                    t in self.inputs or (t in self.producer and live[self.producer[t]]) for t in n.input if t))
            self._live = live
        return self._live[i]

    def ancestors(self, i: int) -> list[int]:
        bits, out, k = self.anc[i], [], 0
        while bits:
            if bits & 1:
                out.append(k)
            bits >>= 1
            k += 1
        return out

    def is_ancestor(self, a: int, b: int) -> bool:
        return bool(self.anc[b] >> a & 1)

    def node_json(self, i: int) -> dict:
        return {"name": self.names[i], "op": self.nodes[i].op_type}


def load_model(path: str) -> Graph:
    """The ONNX model at `path` with its external data, or one KBError line on bad input."""
    import onnx

    from kb.match.modelfile import load

    loaded = load(path)  # one line for a missing, unreadable, corrupt or non-ONNX file
    if loaded.note:
        raise KBError(path, "is not an ONNX model (kb locate converts ONNX; export it to ONNX first)",
                      codes.NOT_A_MODEL)
    model = loaded.model
    external = _external_files(model)
    outside = {t.name for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL}
    view = None
    if external:
        view = onnx.ModelProto()  # small: the external tensors hold no data yet
        view.CopyFrom(model)
        onnx.load_external_data_for_model(model, str(loaded.path.parent))
    if not any(n.op_type for n in model.graph.node):
        raise KBError(path, "has no nodes to locate anything in", codes.NOT_A_MODEL)
    g = Graph.of(model, loaded.path)
    g.external, g.outside, g.view = external, outside, view
    return g


# ----------------------------------------------------------------------------------------- the comparison

def tolerance(ref: np.ndarray, tol: float = TOL) -> float:
    """The absolute difference allowed on a tensor, from its dtype and magnitude.

    float32 keeps about 7 significant digits. An engine that computes a node another way (im2col or
    Winograd convolutions, fused kernels, another summation order) loses a few of them, more as the
    values grow: so the allowance scales with the tensor's largest magnitude, never below `tol` absolute
    (values near 0 lose nothing worth reporting). `tol` = 1e-4 of that magnitude leaves room for
    reductions over a few thousand terms, and stays two orders of magnitude below what conversion bugs
    do (a wrong constant or axis: 1e-2 of the magnitude and up). Half-precision references (float16,
    bfloat16: about 3 digits) get 1e-2 instead. Integers and booleans must be exact."""
    if ref.dtype.kind in "iub":
        return 0.0  # indices, counts, masks: exact
    finite = np.abs(ref[np.isfinite(ref)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    half = ref.dtype == np.float16 or str(ref.dtype) == "bfloat16"
    return max(tol, 1e-2 if half else tol) * scale


@dataclass
class Diff:
    status: str  # agrees, mismatch, nan, shape
    max_abs: float | None = None
    max_rel: float | None = None
    atol: float | None = None
    nan: int = 0
    shape: list[int] | None = None  # the engine's shape, where it is not the reference's
    ref_shape: list[int] | None = None

    @property
    def agrees(self) -> bool:
        return self.status == "agrees"

    def figures(self) -> dict:
        return {k: v for k, v in (("max_abs", self.max_abs), ("max_rel", self.max_rel), ("atol", self.atol),
                                   ("nan", self.nan), ("shape", self.shape), ("expected_shape", self.ref_shape))
                if v is not None and (k != "nan" or v)}

    def text(self) -> str:
        if self.status == "shape":
            return f"has shape {self.shape}, expected {self.ref_shape}"
        head = f"{self.nan} NaN or infinite values where the reference has none; " if self.nan else ""
        figs = (f"max abs diff {self.max_abs:.3g}, max rel diff {self.max_rel:.3g}" if self.max_abs is not None
                else "no finite values")
        return f"{head}{figs} (tolerance: atol {self.atol:.3g})"


def _squeezed(shape) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


def compare(ref: np.ndarray, got: np.ndarray, tol: float = TOL) -> Diff:
    """One tensor against its reference. Unit axes do not count (onnx2ncnn drops the batch axis, MNN
    may keep unit axes); a NaN or infinity counts as a difference only where the reference has none."""
    atol = tolerance(ref, tol)
    ref64 = ref.astype(np.float64)
    out = np.asarray(got, dtype=np.float64)
    if out.shape != ref64.shape:
        # ncnn holds at most 4 axes (a 5-D tensor is stored folded) and drops a batch axis of 1: the same values
        # in the same order are the same tensor; the same count in another order is reported as a wrong shape
        if out.size != ref64.size:
            return Diff("shape", atol=atol, shape=list(out.shape), ref_shape=list(ref.shape))
        folded = _squeezed(out.shape) != _squeezed(ref64.shape)
        out = out.reshape(ref64.shape)
        if folded and not compare(ref, out, tol).agrees:
            return Diff("shape", atol=atol, shape=list(got.shape), ref_shape=list(ref.shape))
    same = (out == ref64) | (np.isnan(out) & np.isnan(ref64))
    nan = int(np.count_nonzero(~np.isfinite(out) & ~same))
    with np.errstate(invalid="ignore"):
        diff = np.where(same, 0.0, np.abs(out - ref64))
    finite = np.isfinite(diff)
    scale = float(np.abs(ref64[np.isfinite(ref64)]).max()) if np.isfinite(ref64).any() else 0.0
    worst = float(diff[finite].max()) if finite.any() else None
    d = Diff("agrees", worst, (worst / scale if scale else worst) if worst is not None else None, atol, nan)
    if nan:
        d.status = "nan"
    elif worst is not None and worst > atol:
        d.status = "mismatch"
    return d


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or str(a.dtype) == "bfloat16"


# ------------------------------------------------------------------------------------------ engine steps

@dataclass
class Fate:
    """How a step failed: what `kb locate` bisects on."""

    stage: str  # convert, load, run
    kind: str  # crash, timeout, convert-error, load-error, run-error
    signal: str | None
    line: str  # the first error line (or the last line printed)
    step: str  # what was run

    def same(self, other: Fate | None) -> bool:
        """The same failure: the same step and signal (a crash, a timeout), or the same first error line."""
        if other is None or self.stage != other.stage or self.kind != other.kind:
            return False
        if self.signal or self.kind == "timeout":
            return self.signal == other.signal or {self.signal, other.signal} <= MEMORY
        return _normal(self.line) == _normal(other.line)

    def fails_like(self, other: Fate | None) -> bool:
        """What bisection looks for: the same failure, or, loading, any failure to load. ncnn's load_param stops
        at the first layer it cannot load in the order of the .param, which is not the graph's: a prefix that
        fails to load on another layer still holds a layer the whole model cannot load (it stays in every
        longer prefix), and it is the earlier one in the graph."""
        if self.same(other):
            return True
        return other is not None and self.stage == other.stage == "load" and self.kind == other.kind == "load-error"

    def json(self) -> dict:
        return {"stage": self.stage, "signal": self.signal, "error": self.line, "step": self.step}


# Signals of one memory error: the same out-of-bounds write kills the process with SIGSEGV in one run and, once
# glibc's heap checks see the damage first ("malloc_consolidate(): unaligned fastbin chunk"), SIGABRT in the
# next, or SIGBUS; the KB's crash signatures group them the same way (SIGSEGV|SIGBUS|SIGABRT).
MEMORY = {"SIGSEGV", "SIGBUS", "SIGABRT"}


def first_error(output: str) -> str:
    return steady(error_line(output))


def _normal(line: str) -> str:
    """An error line without what differs between prefixes of one graph: numbers, quoted names."""
    line = re.sub(r"(?<!\w)(['\"`])[^'\"`]*\1", "'…'", line)
    return re.sub(r"\d+", "#", line).strip().lower()


def _fate(step: child.StepResult, stage: str, missing: bool = False) -> Fate | None:
    if step.ok and not missing:
        return None
    kind = "timeout" if step.timed_out else "crash" if step.signal else f"{stage}-error"
    line = first_error(step.output) or step.fate()
    if missing and step.returncode == 0:
        line = f"exit code 0 but wrote nothing: {line}"
    return Fate(stage, kind, step.signal, line, step.command)


@dataclass
class Read:
    """What an engine run gave: tensors under ONNX names, the ones it could not give and why, or a failure."""

    fate: Fate | None = None
    got: dict[str, np.ndarray] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    by_value: bool = False  # tensors were mapped by value (pnnx): a divergent one is only seen at the outputs
    lost: list[str] = field(default_factory=list)  # model outputs it could not give (then `fate` says so)
    converted_only: bool = False  # asked to stop after converting, it converted


def _load_npz(out: Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    meta = json.loads(out.with_suffix(".json").read_text())
    with np.load(out) as z:
        return {n: z[f"t{i}"] for i, n in enumerate(meta["names"])}, meta["failed"]


class Runner:
    """Runs the steps of one engine on models in a work folder, each in a child with a timeout."""

    def __init__(self, engine: str, work: Path, say: Say, timeout: float = STEP_TIMEOUT):
        self.engine, self.work, self.say, self.timeout = engine, work, say, timeout
        self.steps = 0
        self.converter_said = ""  # the last conversion's output: the ops it says it cannot convert
        self.until = "run"
        self.again: Callable[[list[str]], dict[str, np.ndarray]] | None = None  # re-read the last model converted

    def fn(self, name: str, target: str, **kw) -> child.StepResult:
        self.steps += 1
        self.say(name)
        return child.run_function(name, f"{WORKER}:{target}", timeout=self.timeout, **kw)

    def read(self, g: Graph, model: Path, feed: Path, wanted: list[str], until: str = "run") -> Read:
        """Convert `model` (its graph is `g`) and read `wanted` (ONNX tensor names) on its inputs `feed`;
        the graph outputs are always read. A failure to read the intermediates retries the outputs alone."""
        self.until = until  # "convert": stop once it converts (bisecting a conversion failure)
        r = getattr(self, f"_{self.engine}")(g, model, feed, wanted)
        if r.converted_only:
            return r
        lost = [o for o in g.outputs if r.fate is None and o not in r.got]
        if lost:  # a model output the engine cannot give is a failure of the run, bisected like a crash
            r.lost = lost
            why = r.unreadable.get(lost[0], "not in the converted model")
            r.fate = Fate("run", "run-error", None, f"output {lost[0]!r} cannot be read: {why}", f"{self.engine} run")
        return r

    # -- MNN: mnnconvert (via _tools, never the console script), then the Module API with the kept names
    def _mnn(self, g: Graph, model: Path, feed: Path, wanted: list[str]) -> Read:
        from kb.engines.mnn import convert_step

        dst = self.work / f"{model.stem}.mnn"  # never beside the user's model
        self.again = None
        self.steps += 1
        self.say(f"mnnconvert {model.name}")
        step = convert_step(model, dst, timeout=self.timeout)
        self.converter_said = step.output
        if fate := _fate(step, "convert", missing=not dst.is_file()):
            return Read(fate)
        if self.until == "convert":
            return Read(converted_only=True)
        r = Read()
        self.again = lambda tensors: self._mnn_read(dst, g, feed, tensors)
        names_file = self.work / f"{model.stem}.mnn-names.json"
        step = self.fn(f"MNN tensor names of {dst.name}", "mnn_names", model=str(dst), out=str(names_file))
        kept = set(json.loads(names_file.read_text())) if step.ok and names_file.is_file() else set()
        if not kept:
            r.notes.append(f"MNN.expr.load_as_dict could not list the tensors of {dst.name} ({step.fate()}); "
                           "only the graph outputs were read")
        inner = [t for t in wanted if t in kept and t not in g.outputs]
        for t in wanted:
            if t not in kept and t not in g.outputs:
                r.unreadable[t] = "not in the converted model (fused or renamed by mnnconvert)"
        why = ""  # why reading the intermediates failed, once it has
        for outputs in ([*g.outputs, *inner], list(g.outputs)) if inner else (list(g.outputs),):
            out = self.work / f"{model.stem}.mnn-{len(outputs)}.npz"
            step = self.fn(f"MNN run {dst.name} ({len(outputs)} tensors)", "mnn_run", model=str(dst), feed=str(feed),
                           out=str(out), inputs=list(g.inputs), outputs=outputs)
            if step.ok and out.is_file():
                r.fate = None
                r.got, failed = _load_npz(out)
                r.unreadable.update(failed)
                if why:
                    r.notes.append(f"MNN could not run with the intermediate tensors as outputs ({why}); only the "
                                   "graph outputs were read")
                    r.unreadable.update({t: f"MNN could not run with it as an output ({why})" for t in inner})
                return r
            why = first_error(step.output) or step.fate()
            r.fate = _fate(step, "run")
        return r

    def _mnn_read(self, dst: Path, g: Graph, feed: Path, tensors: list[str]) -> dict[str, np.ndarray]:
        out = self.work / f"{dst.stem}.again-{self.steps}.npz"
        step = self.fn(f"MNN run {dst.name} ({', '.join(tensors)} alone)", "mnn_run", model=str(dst), feed=str(feed),
                       out=str(out), inputs=list(g.inputs), outputs=tensors)
        return _load_npz(out)[0] if step.ok and out.is_file() else {}

    def reread(self, tensors: list[str]) -> dict[str, np.ndarray]:
        """The same converted model run again with only `tensors` as outputs ({} where that cannot be done)."""
        return self.again(tensors) if self.again else {}

    # -- onnx2ncnn: .param/.bin, then ncnn extracts every blob named after an ONNX tensor
    def _onnx2ncnn(self, g: Graph, model: Path, feed: Path, wanted: list[str]) -> Read:
        from kb.engines.onnx2ncnn import convert_step

        param, bin = self.work / f"{model.stem}.param", self.work / f"{model.stem}.bin"
        self.steps += 1
        self.say(f"onnx2ncnn {model.name}")
        step = convert_step(model, param, bin, timeout=self.timeout)
        self.converter_said = step.output
        if fate := _fate(step, "convert", missing=not (param.is_file() and bin.is_file())):
            return Read(fate)
        if self.until == "convert":
            return Read(converted_only=True)
        blobs = _param_blobs(param)
        inputs = {t: t for t in g.inputs if t in blobs}
        r = Read()
        unsupported = [ln.strip() for ln in step.output.splitlines() if "not supported" in ln]
        if unsupported:
            r.notes.append(f"onnx2ncnn: {'; '.join(dict.fromkeys(unsupported))}")
        return self._ncnn(g, model, param, bin, feed, wanted, blobs, inputs, {t: "leading" for t in inputs},
                          {t: t for t in blobs}, r)

    # -- pnnx from ONNX: blobs are renamed (in0, 1, 2, ..., out0): inputs and outputs by position, others by value
    def _pnnx(self, g: Graph, model: Path, feed: Path, wanted: list[str]) -> Read:
        from kb.engines.pnnx import convert_step, read_feeding, script_for

        with np.load(feed) as z:
            shapes = [f"[{','.join(map(str, z[t].shape))}]{_pnnx_type(z[t].dtype)}" for t in g.inputs]
        self.steps += 1
        self.say(f"pnnx {model.name}")
        # fp16=0: pnnx stores weights as fp16 by default, which moves every value by ~1e-3 and would hide the
        # node that goes wrong behind the first one with weights
        step, param, bin = convert_step(model, self.work / f"pnnx-{model.stem}", shapes, fp16=False,
                                        timeout=self.timeout, external=g.external)
        py = script_for(param)
        self.converter_said = step.output
        if fate := _fate(step, "convert", missing=not (param.is_file() and bin.is_file())):
            return Read(fate)
        if self.until == "convert":
            return Read(converted_only=True)
        blobs = _param_blobs(param)
        feeding = read_feeding(py)
        ins = [b for b in blobs if re.fullmatch(r"in\d+", b)]
        outs = [b for b in blobs if re.fullmatch(r"out\d+", b)]
        ins.sort(key=lambda b: int(b[2:]))
        outs.sort(key=lambda b: int(b[3:]))
        inputs = dict(zip(ins, g.inputs))
        axes = {b: (feeding.inputs.get(b) if feeding else "leading") for b in inputs}
        named = dict(zip(outs, g.outputs))  # blob -> ONNX tensor, where known
        r = Read(by_value=True)
        r.notes.append("pnnx renames every blob: inputs and outputs are matched by position, the other tensors "
                       "by value (a tensor no blob reproduces is unreadable); weights kept in fp32 (fp16=0)")
        return self._ncnn(g, model, param, bin, feed, wanted, blobs, inputs, axes, named, r)

    def _ncnn(self, g: Graph, model: Path, param: Path, bin: Path, feed: Path, wanted: list[str], blobs: list[str],
              inputs: dict[str, str], axes: dict, named: dict[str, str], r: Read) -> Read:
        """Extract every blob (named: blob -> ONNX tensor; pnnx's unnamed blobs are kept under "blob:<name>")."""
        if len(inputs) < len(g.inputs):
            missing = [t for t in g.inputs if t not in inputs.values()]
            r.fate = Fate("load", "load-error", None, f"no input blob for {', '.join(missing)}", str(param))
            return r
        out_blobs = [b for b in blobs if b not in inputs]
        self.again = None if r.by_value else lambda tensors: self._ncnn_read(param, bin, feed, inputs, axes, tensors)
        if not r.by_value:
            out_blobs = [b for b in out_blobs if b in g.outputs or b in wanted]
        final = [b for b in out_blobs if named.get(b) in g.outputs]
        why = ""  # why extracting the intermediates failed, once it has
        for chosen in (out_blobs, final) if len(final) < len(out_blobs) else (out_blobs,):
            out = self.work / f"{param.stem}.ncnn-{len(chosen)}.npz"
            step = self.fn(f"ncnn run {param.name} ({len(chosen)} blobs)", "ncnn_blobs", param=str(param),
                           bin=str(bin), feed=str(feed), out=str(out), blobs_in=inputs, axes_in=axes, blobs_out=chosen)
            if step.ok and out.is_file():
                r.fate = None
                got, failed = _load_npz(out)
                r.got = {named.get(b, f"blob:{b}"): a for b, a in got.items()}
                r.unreadable.update({named.get(b, b): why for b, why in failed.items() if b in named})
                if why:
                    r.notes.append(f"ncnn failed extracting the intermediate blobs ({why}); only the outputs were read")
                for t in wanted:
                    if t not in r.got and t not in r.unreadable and not r.by_value:
                        r.unreadable[t] = "no blob of that name (fused or renamed by the converter)"
                return r
            why = first_error(step.output) or step.fate()
            loaded = "load_param failed" not in step.output and "load_model failed" not in step.output
            r.fate = _fate(step, "run" if loaded else "load")
            if not loaded:
                break
        return r


    def _ncnn_read(self, param: Path, bin: Path, feed: Path, inputs: dict, axes: dict,
                   tensors: list[str]) -> dict[str, np.ndarray]:
        out = self.work / f"{param.stem}.again-{self.steps}.npz"
        step = self.fn(f"ncnn run {param.name} ({', '.join(tensors)} alone)", "ncnn_blobs", param=str(param),
                       bin=str(bin), feed=str(feed), out=str(out), blobs_in=inputs, axes_in=axes, blobs_out=tensors)
        return _load_npz(out)[0] if step.ok and out.is_file() else {}


def _external_files(model: onnx.ModelProto) -> set[str]:
    import onnx

    return {e.value for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL
            for e in t.external_data if e.key == "location"}


def _pnnx_type(dtype) -> str:
    return {"float32": "f32", "float64": "f64", "float16": "f16", "int64": "i64", "int32": "i32",
            "int8": "i8", "uint8": "u8", "bool": "i8"}.get(str(dtype), "f32")


def _param_blobs(param: Path) -> list[str]:
    """Every blob an ncnn .param names (layer outputs, in layer order; inputs are Input layers' outputs)."""
    blobs: list[str] = []
    lines = param.read_text(errors="replace").splitlines()[2:]
    for ln in lines:
        parts = ln.split()
        if len(parts) < 4:
            continue
        try:
            n_in, n_out = int(parts[2]), int(parts[3])
        except ValueError:
            continue
        for b in parts[4 + n_in:4 + n_in + n_out]:
            if b not in blobs:
                blobs.append(b)
    return blobs


# ------------------------------------------------------------------------------------------------ locate

@dataclass
class Located:
    model: Path
    engine: str
    version: str | None
    culprit: dict | None
    last_good: dict | None
    unreadable: list[str]
    compared: int
    known: list[dict]
    unconverted: list[dict]  # what else the converter says it cannot do (ops, an entry's own line), with entries
    notes: list[str]
    seconds: float
    steps: int

    def json(self) -> dict:
        return {"model": str(self.model), "engine": {"name": self.engine, "version": self.version},
                "culprit": self.culprit, "last_good": self.last_good, "unreadable": self.unreadable,
                "compared": self.compared, "known": self.known, "unconverted": self.unconverted, "notes": self.notes,
                "seconds": round(self.seconds, 2), "steps": self.steps}


def make_inputs(g: Graph, given: str | None, seed: int = 0) -> tuple[dict[str, np.ndarray], list[str]]:
    """The model's inputs: from an .npz, else seeded random (normal floats; small non-negative integers,
    which index safely; an unknown dimension is 1, said so)."""
    import onnx

    notes = []
    if given:
        from kb.match.paths import input_file

        p, _ = input_file(given)
        try:
            with np.load(p) as z:
                arrays = {k: z[k] for k in z.files}
        except Exception as e:  # noqa: BLE001 -- any unreadable file is one line
            raise KBError(p, f"is not an .npz of input arrays ({type(e).__name__})", codes.BAD_INPUTS) from None
        missing = [t for t in g.inputs if t not in arrays]
        if missing:
            raise KBError(p, f"has no array for input {missing[0]!r} (it holds {', '.join(arrays) or 'none'})",
                          codes.BAD_INPUTS)
        return {t: arrays[t] for t in g.inputs}, notes
    rng = np.random.default_rng(seed)
    out = {}
    for vi in g.model.graph.input:
        if vi.name not in g.inputs:
            continue
        tt = vi.type.tensor_type
        dims = []
        for d in tt.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 0:
                dims.append(d.dim_value)
            else:
                dims.append(1)
                notes.append(f"input {vi.name!r}: dimension {d.dim_param or '?'} set to 1 (give --inputs to choose)")
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type) if tt.elem_type else np.dtype(np.float32)
        if dtype.kind == "f":
            out[vi.name] = rng.standard_normal(dims).astype(dtype)
        elif dtype.kind == "b":
            out[vi.name] = rng.integers(0, 2, dims).astype(bool)
        else:
            out[vi.name] = rng.integers(0, 4, dims).astype(dtype)
    return out, notes


def reference(g: Graph, feed: Path, work: Path, say: Say, timeout: float) -> tuple[dict[str, np.ndarray], str]:
    """onnxruntime's value of every tensor a node of the main graph writes (Constants aside); or nothing, and
    why (a custom op): a failing engine can still be bisected then, but no value compared."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(g.model)
    have = set(g.outputs)
    wanted = [t for i, n in enumerate(g.nodes) if n.op_type != "Constant" for t in n.output if t and t not in have]
    m.graph.output.extend(onnx.ValueInfoProto(name=t) for t in wanted)
    src = save_onnx(m, work / "reference.onnx")
    out = work / "reference.npz"
    say("onnxruntime: every intermediate tensor")
    names = list(dict.fromkeys([*g.outputs, *wanted]))
    step = child.run_function("onnxruntime reference", f"{WORKER}:onnxruntime", timeout=timeout, model=str(src),
                              feed=str(feed), out=str(out), outputs=names)
    if not step.ok or not out.is_file():
        return {}, f"onnxruntime cannot run it ({step.fate()}): {first_error(step.output)}"
    return _load_npz(out)[0], ""


def _engine_check(engine: str, version: str | None) -> str | None:
    from kb.engines import ENGINES as INFO
    from kb.engines import missing as engine_missing
    from kb.engines import version as engine_version

    if engine not in ENGINES:
        raise KBError("--engine", f"kb locate drives {', '.join(ENGINES)}, not {engine!r}", codes.BAD_ENGINE)
    needs = [engine] + (["ncnn"] if engine in ("onnx2ncnn", "pnnx") else [])
    for e in needs:
        if why := engine_missing(e):
            raise KBError("--engine", why, codes.ENGINE_MISSING)
    have = engine_version(engine)
    if version and have and version != have:
        raise KBError("--engine", f"{engine}=={version} asked for, but {INFO[engine].shown} {have} is what is "
                                  "installed here", codes.BAD_ENGINE)
    return have


@dataclass
class Prepared:
    """A model and inputs checked before anything runs: bad input fails in one line, and fast."""

    g: Graph
    engine: str
    version: str | None
    arrays: dict[str, np.ndarray]
    notes: list[str]
    started: float


def prepare(model: str, engine: str, version: str | None = None, inputs: str | None = None, seed: int = 0) -> Prepared:
    started = time.monotonic()
    have = _engine_check(engine, version)
    g = load_model(model)
    arrays, notes = make_inputs(g, inputs, seed)
    return Prepared(g, engine, have, arrays, notes, started)


def locate(model: str | Prepared, engine: str = "", version: str | None = None, inputs: str | None = None,
           tol: float | None = None, say: Say | None = None, timeout: float = STEP_TIMEOUT, seed: int = 0,
           keep_reference: dict | None = None) -> Located:
    """Locate where `engine` goes wrong on `model` (see the module's docstring). `keep_reference`: a dict that
    receives onnxruntime's values ("ref", "no_ref", as `reference` returns them), for kb reduce to reuse
    (running the whole model again with every tensor as an output costs seconds on a large one)."""
    p = model if isinstance(model, Prepared) else prepare(model, engine, version, inputs, seed)
    say = say or (lambda _: None)
    tol = ENGINE_TOL[p.engine] if tol is None else tol
    g, notes = p.g, list(p.notes)
    with tempfile.TemporaryDirectory(prefix="kb-locate-") as tmp:
        work = Path(tmp)
        feed = work / "inputs.npz"
        np.savez(feed, **p.arrays)
        ref, no_ref = reference(g, feed, work, say, timeout)
        if keep_reference is not None:
            keep_reference.update(ref=ref, no_ref=no_ref)
        ref = {**p.arrays, **ref} if ref else ref  # the inputs too: their shapes are reported
        runner = Runner(p.engine, work, say, timeout)
        tensors = [t for t, a in ref.items() if a.dtype.kind in "fiub" and t not in g.outputs]
        read = runner.read(g, g.path, feed, tensors)  # the user's own file (its external data too), as given
        said = runner.converter_said
        notes += read.notes
        if no_ref and read.fate is None:
            raise KBError(g.path, f"{p.engine} runs it, but there is no reference to compare with: {no_ref}",
                          codes.NO_REFERENCE)
        if no_ref:
            notes.append(f"no reference values ({no_ref}); the failure is bisected all the same")
        early = None
        if read.fate is not None and read.lost and ref:
            # it ran, but an output cannot be read: a tensor that went wrong before it explains it, if one did
            early = confirmed(g, ref, read, tol, runner, say, notes)
            if early[0] is None:
                early = None
            else:
                notes.append(f"{read.fate.line}; the values read before it already diverge")
        if early is not None:
            culprit, last_good, unreadable, compared = early
        elif read.fate is not None:
            culprit, last_good, more = bisect(g, ref, feed, work, runner, read.fate, say)
            notes += more
            unreadable, compared = [], 0
        else:
            culprit, last_good, unreadable, compared = confirmed(g, ref, read, tol, runner, say, notes)
        if culprit:
            say("matching the KB's entries around the culprit")
        known = known_entries(g, culprit, p.engine) if culprit else []
        others = unconverted(g, said, p.engine, culprit, known)
    return Located(g.path, p.engine, p.version, culprit, last_good, unreadable, compared, known, others, notes,
                   time.monotonic() - p.started, runner.steps + 1)


def confirmed(g: Graph, ref: dict[str, np.ndarray], read: Read, tol: float, runner: Runner, say: Say,
              notes: list[str]):
    """`diverged`, where a divergent intermediate tensor is read again alone before it is believed: read with
    many others it may not be what the engine computes (MNN reuses a requested tensor's memory for a later
    in-place op). Only a divergence that stays is reported."""
    found = diverged(g, ref, read, tol)
    for _ in range(CONFIRMS):
        culprit = found[0]
        if culprit is None or culprit["tensor"] in g.outputs or not runner.again:
            break
        t = culprit["tensor"]
        say(f"confirming {t}")
        alone = runner.reread([t]).get(t)
        if alone is None or not compare(ref[t], alone, tol).agrees:
            break
        read.got[t] = alone
        notes.append(f"{t}: read with the other tensors it diverged, read alone it agrees (an artifact of "
                     "reading many tensors at once)")
        found = diverged(g, ref, read, tol)
    return found


def _node_detail(g: Graph, i: int, ref: dict[str, np.ndarray]) -> dict:
    import onnx

    n = g.nodes[i]
    inits = {t.name: list(t.dims) for t in g.model.graph.initializer}
    for k in g.nodes:
        if k.op_type == "Constant":
            for a in k.attribute:
                if a.name == "value":
                    inits[k.output[0]] = list(a.t.dims)
    shapes = [{"name": t, "shape": list(ref[t].shape) if t in ref else inits.get(t, _input_shape(g, t))}
              for t in n.input if t]
    return {"node": g.node_json(i), "attributes": {a.name: _jsonable(onnx.helper.get_attribute_value(a))
                                                   for a in n.attribute},
            "inputs": shapes, "outputs": list(n.output)}


def _input_shape(g: Graph, t: str):
    for vi in g.model.graph.input:
        if vi.name == t:
            return [d.dim_value or d.dim_param or None for d in vi.type.tensor_type.shape.dim]
    return None


def _jsonable(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if hasattr(v, "dims"):  # a TensorProto
        import onnx.numpy_helper

        a = onnx.numpy_helper.to_array(v)
        return a.tolist() if a.size <= 8 else f"tensor{list(a.shape)}"
    return f"<{type(v).__name__}>"


def diverged(g: Graph, ref: dict[str, np.ndarray], read: Read, tol: float):
    """(culprit, last_good, unreadable tensors, tensors compared) from one engine run that completed."""
    got = dict(read.got)
    if read.by_value:
        got = _by_value(g, ref, got, tol)
    status: dict[str, Diff] = {}
    unreadable: list[str] = []
    first: tuple[int, str] | None = None
    for i, n in enumerate(g.nodes):
        if n.op_type == "Constant":
            continue
        for t in n.output:
            if not t or t not in ref or ref[t].dtype.kind not in "fiub":
                continue
            if t not in got:
                if _is_float(ref[t]):  # integers inside the graph are mostly shapes, which engines fold away
                    unreadable.append(t)
                continue
            d = compare(ref[t], got[t], tol)
            if not d.agrees and t not in g.outputs and (later := _moved(g, ref, t, got[t], tol)):
                unreadable.append(t)  # the engine's tensor of that name holds a later one's value
                read.unreadable[t] = f"the converted model's tensor of that name holds {later!r}"
                continue
            status[t] = d
            if not d.agrees and first is None:
                first = (i, t)
    agreeing = [g.producer[t] for t, d in status.items() if d.agrees and t in g.producer]
    if first is None:
        last = max(agreeing, default=None)
        return None, ({"node": g.node_json(last)} if last is not None else None), unreadable, len(status)
    i, t = first
    cleared = 0  # nodes something agreeing was computed from: fine
    for a in agreeing:
        cleared |= g.anc[a] | (1 << a)
    suspects = [k for k in g.ancestors(i) if not cleared >> k & 1 and g.computed(k)
                and not any(o in status for o in g.nodes[k].output)]
    culprit_i = i
    if read.by_value and suspects:
        # pnnx: the divergence is seen at an output; the culprit is the first node on its path whose inputs
        # all agree and whose output no blob reproduces
        ok = {t for t, d in status.items() if d.agrees} | set(g.inputs) | g.consts
        frontier = [k for k in suspects if all(x in ok for x in g.nodes[k].input if x)]
        culprit_i = frontier[0] if frontier else suspects[0]
        suspects = [k for k in suspects if k != culprit_i]
    d = status[t]
    culprit = {**_node_detail(g, culprit_i, ref), "kind": d.status, "tensor": t, **d.figures(),
               "observed_at": g.node_json(i) if culprit_i != i else None,
               "suspects": [g.node_json(k) for k in suspects]}
    good = [a for a in agreeing if g.is_ancestor(a, culprit_i)]
    last_good = None
    if good:
        k = max(good)
        last_good = {"node": g.node_json(k), "tensor": next(o for o in g.nodes[k].output if o in status)}
    below = [k for k in range(len(g.nodes)) if k <= i or not g.is_ancestor(i, k)]
    shown_unreadable = [u for u in unreadable if g.producer.get(u) in below]
    return culprit, last_good, shown_unreadable, len(status)


def _moved(g: Graph, ref: dict[str, np.ndarray], t: str, got: np.ndarray, tol: float, hops: int = 2) -> str | None:
    """The tensor a few nodes downstream of `t` whose value the engine's `t` holds, if any: a converter that
    fuses a node into its producer may give the fused result the producer's name (mnnconvert names a Gemm's
    output after fusing the Round that follows into it), which is a renaming, not a wrong value."""
    frontier = [t]
    for _ in range(hops):
        frontier = [o for x in frontier for c in g.consumers.get(x, []) for o in g.nodes[c].output if o in ref]
        for o in frontier:
            if _is_float(ref[o]) and _squeezed(ref[o].shape) == _squeezed(ref[t].shape) and compare(ref[o], got, tol).agrees:
                return o
    return None


def _by_value(g: Graph, ref: dict[str, np.ndarray], got: dict[str, np.ndarray], tol: float) -> dict[str, np.ndarray]:
    """pnnx's unnamed blobs, each given to the ONNX tensors whose values it reproduces (same shape up to unit
    axes, within the tolerance); graph outputs keep their positional blobs."""
    named = {t: a for t, a in got.items() if not t.startswith("blob:")}
    pool: dict[tuple, list[np.ndarray]] = {}
    for t, a in got.items():
        if t.startswith("blob:"):
            pool.setdefault(_squeezed(a.shape), []).append(a)
    for t, r in ref.items():
        if t in named or not _is_float(r):
            continue
        for a in pool.get(_squeezed(r.shape), []):
            if compare(r, a, tol).agrees:
                named[t] = a
                break
    return named


def bisect(g: Graph, ref: dict[str, np.ndarray], feed: Path, work: Path, runner: Runner, fate: Fate, say: Say):
    """The smallest prefix of the graph (its first k computing nodes in topological order) that fails as the
    whole model does; its last node is the culprit. Prefixes grow with k, so a failure that a node brings in
    stays in every longer prefix: binary search, about log2(nodes) conversions."""
    import onnx
    from onnx.utils import Extractor

    points = [i for i in range(len(g.nodes)) if g.computed(i)]
    if not points:
        return {"node": None, "kind": fate.kind, **fate.json(), "suspects": [],
                "why": "no node computes anything from the inputs, so there is no prefix to cut"}, None, []
    m = onnx.ModelProto()
    m.CopyFrom(g.model)
    if not ref:  # no reference (a custom op onnxruntime lacks): the types shape inference finds
        m = onnx.shape_inference.infer_shapes(m)
    known = {vi.name for vi in [*m.graph.value_info, *m.graph.input, *m.graph.output]}
    floats = {vi.name for vi in m.graph.value_info if vi.type.tensor_type.elem_type in FLOAT_TYPES}
    floats |= {t for t, a in ref.items() if _is_float(a)}
    for n in g.nodes:  # Extractor needs a type for every output it is asked for
        for t in n.output:
            if t and t not in known:
                a = ref.get(t)
                m.graph.value_info.append(onnx.helper.make_tensor_value_info(
                    t, onnx.helper.np_dtype_to_tensor_dtype(a.dtype) if a is not None else onnx.TensorProto.FLOAT,
                    list(a.shape) if a is not None else None))
                known.add(t)
    extractor = Extractor(m)
    tried: dict[int, Fate | None] = {}
    notes: list[str] = []

    def loose_ends(k: int) -> list[str]:
        """The outputs of prefix k: its last node's, and the float tensors no node inside consumes."""
        if k < 0:
            return []
        last = points[k]
        inside = set(range(last + 1))
        outs = [t for t in g.nodes[last].output if t]
        for i in points[:k]:
            for t in g.nodes[i].output:
                if t and t in floats and not any(c in inside for c in g.consumers.get(t, [])):
                    outs.append(t)
        return outs

    def attempt(outs: list[str], file: str, where: str) -> Fate | None | bool:
        """The failure of the cut with these outputs (None: it passes; False: onnx cannot cut it)."""
        outs = list(dict.fromkeys(outs))
        needed = {t for o in outs for t in _needed_inputs(g, g.producer[o])}
        ins = [t for t in g.inputs if t in needed]
        plain = runner.say
        try:
            sub = extractor.extract_model(ins, outs)
        except Exception as e:  # noqa: BLE001 -- a prefix onnx cannot cut is reported, never fatal
            notes.append(f"onnx.utils.Extractor could not cut {where}: {type(e).__name__}: {e}")
            return False
        path = save_onnx(sub, work / file, g.outside)
        sg = Graph.of(sub, path)
        runner.say = lambda step: say(f"bisecting, {where}: {step}")
        try:
            r = runner.read(sg, path, feed, [], until=fate.stage)
        finally:
            runner.say = plain
        return r.fate

    def fails(k: int) -> bool:
        last = points[k]
        got = attempt(loose_ends(k), f"prefix-{k + 1}.onnx",
                      f"{k + 1} of {len(points)} nodes (up to {g.names[last]}, {g.nodes[last].op_type})")
        tried[k] = got or None
        if got is False or got is None:
            return False
        return fate.fails_like(got) if k < len(points) - 1 else fate.same(got)

    lo, hi = -1, len(points) - 1  # prefix lo passes (-1: the empty one), prefix hi fails as the model does
    if not fails(hi):  # the whole graph, cut and saved as every prefix is: it must fail as the file does
        other = tried.get(hi)
        guess = (f"the model keeps its weights in external data ({', '.join(sorted(g.external))})" if g.external
                 else "a flaky crash?")
        culprit = {"node": None, "kind": fate.kind, **fate.json(), "suspects": [],
                   "why": "the failure is not any node's: the whole graph, re-saved as locate saves each prefix "
                          "(weights inside the file, unused inputs dropped), "
                          + (f"fails another way: {other.line}" if other else "converts and runs")
                          + f" ({guess})"}
        return culprit, None, notes
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid
    i = points[hi]
    own = tried.get(hi) or fate  # the smallest failing prefix's own failure (the whole model's, if none smaller)
    # The nodes prefix hi brings in are its last node and the nodes computing constants for it (an Identity of a
    # weight, a pad size from ConstantOfShape and Slice), which are no bisection points: the shorter prefix
    # plus the first j of those, their outputs kept, finds the first that fails so already.
    before = set(points[:lo + 1])  # the nodes of prefix lo: its points and what they are computed from
    for k in points[:lo + 1]:
        before |= set(g.ancestors(k))
    consts = [k for k in g.ancestors(i) if k not in before and not g.computed(k) and g.nodes[k].op_type != "Constant"
              and any(t for t in g.nodes[k].output)][:16]
    size = sum(1 for k in range(i + 1) if g.nodes[k].op_type != "Constant")
    if consts:
        base = loose_ends(lo)
        lo_c, hi_c = 0, len(consts) + 1  # the first j constants pass (j = lo_c); j = hi_c stands for node i itself
        while hi_c - lo_c > 1:
            mid = (lo_c + hi_c) // 2
            outs = base + [t for k in consts[:mid] for t in g.nodes[k].output if t]
            got = attempt(outs, f"prefix-{lo + 1}-c{mid}.onnx", f"{lo + 1} nodes and {mid} of the constants "
                          f"{g.names[i]} reads (up to {g.names[consts[mid - 1]]}, {g.nodes[consts[mid - 1]].op_type})")
            if got and fate.fails_like(got):
                hi_c, own = mid, got
            else:
                lo_c = mid
        if hi_c <= len(consts):
            notes.append(f"the failure comes with {g.names[consts[hi_c - 1]]} ({g.nodes[consts[hi_c - 1]].op_type}), "
                         f"which computes a constant {g.names[i]} ({g.nodes[i].op_type}) reads: a prefix without "
                         f"{g.names[i]} but with it fails so already")
            i = consts[hi_c - 1]
            size = len({k for k in before if g.nodes[k].op_type != "Constant"} | set(consts[:hi_c]))
    culprit = {**_node_detail(g, i, ref), "kind": own.kind, **own.json(),
               "prefix_nodes": size,
               "suspects": []}
    if hi == len(points) - 1 and len(points) > 1 and lo == hi - 1 and tried.get(lo) is not None:
        notes.append(f"the prefix without the last node fails another way: {tried[lo].line}")
    if not own.same(fate):
        notes.append(f"the whole model's load stops at another layer first ({fate.line}): ncnn names the first "
                     "layer it cannot load in the order of the .param; this node is the first in the graph's order")
    last_good = None
    if lo >= 0:  # the longest prefix that does not fail this way (it may fail another way: said so)
        last_good = {"node": g.node_json(points[lo])}
        if tried.get(lo) is not None:
            last_good["fails_otherwise"] = tried[lo].json()
    return culprit, last_good, notes


def _needed_inputs(g: Graph, i: int) -> set[str]:
    needed = set()
    for k in [*g.ancestors(i), i]:
        needed.update(t for t in g.nodes[k].input if t in g.inputs)
    return needed


# -------------------------------------------------------------------------------------------- known or new

def _concerns(engines: list[str], engine: str) -> bool:
    """An entry of this engine's, or of the ncnn runtime's when neither converter is named (onnx2ncnn and pnnx
    both end in ncnn, but a converter's bug is its own)."""
    other = {"onnx2ncnn": "pnnx", "pnnx": "onnx2ncnn"}.get(engine)
    return engine in engines or (other is not None and "ncnn" in engines and other not in engines)


_KINDS = {"crash": {"crash"}, "timeout": {"crash"}, "mismatch": {"mismatch", "nan"}, "nan": {"nan", "mismatch"},
          "shape": {"shape", "mismatch"}}  # a failure kind -> the signature kinds that describe it; errors: log
_STEPS = {"convert": {"mnnconvert", "onnx2ncnn", "pnnx"}, "load": {"MNN", "ncnn"}, "run": {"MNN", "ncnn"}}


def _fits(signatures, culprit: dict) -> bool:
    """A signature of the entry describes this failure: its kind, in the step that failed (values are wrong
    in the runtime's step); a signature naming no step fits any."""
    kinds = _KINDS.get(culprit["kind"], {"log", "crash"})
    steps = _STEPS.get(culprit.get("stage", "run"), set())
    return any(s.kind in kinds and (s.step is None or s.step in steps) for s in signatures)


def _evidence(signatures, culprit: dict) -> bool:
    """A signature's own pattern matches what the failing step printed (its first error line, or its signal)."""
    said = " ".join(x for x in (culprit.get("error"), culprit.get("signal")) if x)
    for sig in signatures:
        try:
            if said and sig.pattern and re.search(sig.pattern, said):
                return True
        except re.error:
            continue
    return False


def _named(e, **how) -> dict:
    """An entry as locate names it: its id, page and title, and how it relates to the failure."""
    from kb.match.links import page_url

    return {"id": e.meta.id, "entry": e.slug, "title": e.meta.title, "url": page_url(e.slug), **how}


def known_entries(g: Graph, culprit: dict, engine: str) -> list[dict]:
    """The KB entries concerning `engine` whose trigger pattern matches the culprit or a direct producer or
    consumer of it: the culprit's own first, then those whose signature kind fits the failure."""
    from kb.entries import load_all
    from kb.pattern import GraphIndex, match_graph

    if culprit["node"] is None:  # no node to match a pattern on: the entries whose signature says what it printed
        return [_named(e, pattern=None, nodes={}, on_culprit=True, fits=True, evidence=True)
                for e in load_all() if _concerns(list(e.meta.engines), engine) and _evidence(e.meta.signatures, culprit)]
    i = g.names.index(culprit["node"]["name"])
    near = {g.names[i]}
    near |= {g.names[g.producer[t]] for t in g.nodes[i].input if t in g.producer}
    near |= {g.names[c] for t in g.nodes[i].output for c in g.consumers.get(t, [])}
    index = GraphIndex((g.view or g.model).graph)  # a pattern may ask where a weight is stored (KB045)
    found = []
    for e in load_all():
        if not _concerns(list(e.meta.engines), engine):
            continue
        for p in e.meta.trigger:
            for m in match_graph(p, index):
                nodes = set(m.nodes.values())
                if nodes & near:
                    fits = _fits(e.meta.signatures, culprit)
                    said = _evidence(e.meta.signatures, culprit)
                    found.append(_named(e, pattern=p.name, nodes=m.nodes, on_culprit=g.names[i] in nodes,
                                        fits=fits or said, evidence=said))
                    break
            else:
                continue
            break
    found.sort(key=lambda f: (not f["on_culprit"], not f["evidence"], not f["fits"], f["id"]))
    return found


def unconverted(g: Graph, said: str, engine: str, culprit: dict | None, known: list[dict] = ()) -> list[dict]:
    """The ops the converter's output says it cannot convert (the message pages' `unsupported_op`), other than
    the culprit's: the first failure hides the next ones, which the user meets once it is solved."""
    from kb import messages

    pages = [m for m in messages.load_all().values() if m.unsupported_op]
    lines = {op: line.strip() for line in said.splitlines() for m in pages for op in messages.named_ops(m, line)}
    first = (culprit or {}).get("node") or {}
    found = []
    for op, line in lines.items():
        nodes = [i for i, n in enumerate(g.nodes) if n.op_type == op]
        if not nodes or op == first.get("op"):
            continue
        like = {"node": g.node_json(nodes[0]), "kind": "convert-error", "stage": "convert", "error": line}
        found.append({"op": op, "nodes": [g.names[i] for i in nodes], "line": line,
                      "known": known_entries(g, like, engine)})
    return found + _reported(g, said, engine, known, found, first)


_CONVERTERS = {"mnnconvert", "onnx2ncnn", "pnnx"}


def _reported(g: Graph, said: str, engine: str, known: list[dict], found: list[dict], first: dict) -> list[dict]:
    """Other problems the converter's output names: an entry's own log signature on a line the converter printed
    (a message other causes print too only with the entry's own evidence in that output, as kb explain reads
    it), with the nodes its trigger matches. The first failure hides them, as it hides the ops it cannot
    convert; or they come before it, in the prefix that fails (`before`), and may be its cause."""
    from kb import messages
    from kb.entries import load_all
    from kb.match.rules import evidence
    from kb.pattern import GraphIndex, match_graph

    lines = [ln.strip() for ln in said.splitlines() if ln.strip()]
    if not lines:
        return []
    generic = {m.id for m in messages.load_all().values() if m.generic}
    seen = {k["id"] for k in known} | {k["id"] for u in found for k in u["known"]}
    index = None
    out = []
    at = g.names.index(first["name"]) if first.get("name") in g.names else None
    prefix = {*g.ancestors(at), at} if at is not None else set()
    for e in load_all():
        if e.meta.id in seen or not _concerns(list(e.meta.engines), engine):
            continue
        sigs = [s for s in e.meta.signatures if s.kind == "log" and (s.step is None or s.step in _CONVERTERS)]
        if any(s.message in generic for s in sigs) and not evidence(e, said):
            sigs = [s for s in sigs if s.message not in generic]
        line = next((ln for s in sigs for ln in lines if s.regex().search(ln)), None)
        if line is None:
            continue
        index = index or GraphIndex((g.view or g.model).graph)
        matched = next((set(m.nodes.values()) for p in e.meta.trigger for m in match_graph(p, index)), set())
        at_nodes = [i for i, n in enumerate(g.names) if n in matched]
        out.append({"op": g.nodes[at_nodes[-1]].op_type if at_nodes else None, "nodes": [g.names[i] for i in at_nodes],
                    "line": line, "printed": True, "before": bool(prefix & set(at_nodes)),
                    "known": [_named(e, pattern=None, nodes={}, on_culprit=False, fits=True, evidence=True)]})
    return out


# -------------------------------------------------------------------------------------------------- text

def as_text(r: Located) -> str:
    where = f"{r.engine} {r.version}" if r.version else r.engine
    lines = []
    c = r.culprit
    if c is None:
        lines.append(f"{r.model}: no divergence on {where}: {r.compared} tensors compared, all within tolerance "
                     f"({len(r.unreadable)} not readable; {r.seconds:.1f} s)")
    elif c["node"] is None:
        how = f"killed by {c['signal']}" if c.get("signal") else c.get("error", "")
        lines.append(f"{r.model}: on {where}, {c['kind']} in {c['stage']} ({how}; {r.seconds:.1f} s), but {c['why']}")
        lines += [f"{k['id']} describes what it printed ({k['title']}): {k['url']}" for k in r.known]
    else:
        node = f"node {c['node']['name']!r} ({c['node']['op']})"
        if c["kind"] in ("mismatch", "nan", "shape"):
            d = Diff(c["kind"], c.get("max_abs"), c.get("max_rel"), c.get("atol"), c.get("nan", 0), c.get("shape"),
                     c.get("expected_shape"))
            lines.append(f"{r.model}: on {where}, {node} is the first to diverge "
                         f"({r.compared} tensors compared; {r.seconds:.1f} s)")
            at = f" (seen at {c['observed_at']['name']!r}, {c['observed_at']['op']})" if c.get("observed_at") else ""
            lines.append(f"  output {c['tensor']!r}{at}: {d.text()}")
        else:
            lines.append(f"{r.model}: on {where}, {node} is where it fails: {c['kind']} in {c['stage']} "
                         f"({r.seconds:.1f} s)")
            how = f"killed by {c['signal']}" if c.get("signal") else c.get("error", "")
            n = c["prefix_nodes"]
            lines.append(f"  the smallest failing prefix ({n} node{'s' * (n != 1)}) ends at it: {how}")
            if c.get("signal") and c.get("error"):
                lines.append(f"  last line: {c['error']}")
    if c is not None and c["node"] is not None:
        if c["attributes"]:
            lines.append("  attributes: " + ", ".join(f"{k}={v}" for k, v in c["attributes"].items()))
        lines.append("  inputs: " + ", ".join(f"{x['name']} {x['shape']}" for x in c["inputs"]))
        if c.get("suspects"):
            lines.append("  it may start earlier, in nodes whose output could not be read: "
                         + ", ".join(f"{s['name']} ({s['op']})" for s in c["suspects"]))
        if r.last_good:
            lg = r.last_good
            other = f" (that prefix fails another way: {lg['fails_otherwise']['error']})" if "fails_otherwise" in lg else ""
            agreed = "agreed" if c["kind"] in ("mismatch", "nan", "shape") else "does not fail this way"
            lines.append(f"last node that {agreed}: {lg['node']['name']!r} ({lg['node']['op']}){other}")
        if r.known:
            for k in r.known:
                rel = ("describes this" if k["on_culprit"] and k["fits"] else
                       "matches this node, but describes another failure" if k["on_culprit"] else
                       "matches next to it" + ("" if k["fits"] else ", and describes another failure"))
                lines.append(f"{k['id']} {rel} ({k['title']}): {k['url']}")
        else:
            lines.append("no known entry: a new problem? (kb new SLUG --engine ...)")
    for u in r.unconverted:
        n = len(u["nodes"])
        named = "; ".join(f"{k['id']} matches it ({k['title']}): {k['url']}" for k in u["known"]) or "no known entry"
        where = f"{u['op']}, {n} node{'s' * (n != 1)} from {u['nodes'][0]!r}" if n else "no node its trigger matches"
        said = "also printed" if u.get("printed") else "also not converted"
        where += " (in the failing prefix: it may be the cause)" if u.get("before") else ""
        lines.append(f"{said} ({u['line']}): {where}; {named}")
    if r.unreadable:
        shown = ", ".join(r.unreadable[:8]) + (f", … (+{len(r.unreadable) - 8})" if len(r.unreadable) > 8 else "")
        lines.append(f"not readable (fused away or renamed): {shown}")
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)


def command(model: str, engine: str, inputs: str | None, as_json: bool, tol: float | None, timeout: float,
            progress=None) -> int:
    """`kb locate`: print the result; 1 when a culprit is found, 0 when every tensor agrees. `progress`: a
    rich Progress, shown while the steps run (bad input is reported before it starts)."""
    from kb.match.status import parse_engines

    wanted = parse_engines([engine])[0]  # one line for a malformed or unknown engine
    prepared = prepare(model, wanted.engine, wanted.version, inputs)
    with progress if progress is not None else nullcontext():
        task = progress.add_task("kb locate", total=None) if progress is not None else None
        say = (lambda s: progress.update(task, description=s)) if progress is not None else None
        r = locate(prepared, tol=tol, say=say, timeout=timeout)
    print(json.dumps(r.json(), indent=1) if as_json else as_text(r))
    return codes.FOUND if r.culprit else codes.NOTHING_FOUND
