"""`kb reduce MODEL.onnx --engine E -o reduced.onnx`: the smallest ONNX model that still fails the same way.

It starts from `kb locate`'s culprit (the first divergent node, or the last node of the smallest failing prefix)
and delta-debugs from there, re-running the engine (kb.locate.Runner: every step a child with a timeout) on
every candidate, which is kept only when it fails with the same signature:
- a failure to convert, load or run: the same step and signal class, or the same first error line (Fate.same);
- wrong values: the first divergent node (kb.locate.diverged) is of the culprit's op and of the same kind
  (mismatch, nan, shape), beyond the same tolerance.
onnxruntime must run every candidate (its values are the reference, and a model it rejects is not valid).

The steps, each under the time budget (the best candidate so far is kept when it runs out):
1. cut: the culprit alone, its inputs made graph inputs fed with the values onnxruntime computed for them in
   the whole model (constant-producing ancestors and integer tensors, shapes mostly, become initializers);
   where that does not fail, the nodes it depends on (the prefix, for a failure) are delta-debugged away
   (ddmin: chunks, then single nodes; a node taken away turns its outputs into inputs of the same kind);
2. shapes: every dimension of the float inputs made 1 at once; where that does not fail the same way, each
   dimension made 1, else halved while it still fails (a slice of the same values); wrong values must keep at
   least half the difference the cut showed, not merely the tolerance;
3. weights: float initializers of more than 16 values become seeded random ones of the same shape and scale
   (all at once, else one by one), so the reduced model carries none of the user's weights.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kb import locate as L
from kb.errors import KBError
from kb.export import save_onnx
from kb.match import codes

if TYPE_CHECKING:
    import onnx

BUDGET = 60.0  # seconds for the whole command: locating, reducing and saving
SAVING = 1.0  # of which kept for writing the files after the reduction
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MNN_COMMAND = "MNNConvert -f ONNX --modelFile {m} --MNNModel {s}.mnn --bizCode MNN"
COMMANDS = {"mnn": MNN_COMMAND, "onnx2ncnn": "onnx2ncnn {m} {s}.param {s}.bin",
            "pnnx": "pnnx {m} inputshape={shapes} fp16=0"}
STEP_OF = {("mnn", "convert"): "mnnconvert", ("mnn", "load"): "MNN", ("mnn", "run"): "MNN",
           ("onnx2ncnn", "convert"): "onnx2ncnn", ("pnnx", "convert"): "pnnx"}


@dataclass
class Target:
    """The signature a candidate must reproduce."""

    fate: L.Fate | None  # a failure to convert, load or run
    op: str | None = None  # wrong values: the culprit's op
    kind: str | None = None  # mismatch, nan, shape

    def text(self) -> str:
        if self.fate is None:
            return f"{self.kind} at {self.op}"
        f = self.fate
        return f"{f.kind} in {f.stage}" + (f" ({f.signal})" if f.signal else f": {f.line}")


@dataclass
class Outcome:
    """A candidate that fails the same way, with what was seen."""

    model: onnx.ModelProto
    arrays: dict[str, np.ndarray]
    ref: dict[str, np.ndarray]
    fate: L.Fate | None = None
    culprit: dict | None = None  # wrong values: kb.locate.diverged's culprit on the candidate
    got: np.ndarray | None = None
    name: str = ""  # the candidate's file stem, in the step's command


@dataclass
class Reduced:
    model: Path
    engine: str
    version: str | None
    target: Target | None
    located: L.Located
    nodes_before: int
    outcome: Outcome | None = None
    saved: dict[str, str] = field(default_factory=dict)
    tries: int = 0
    kept: int = 0
    seconds: float = 0.0
    budget_spent: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def nodes(self) -> int:
        return len(self.outcome.model.graph.node) if self.outcome else 0

    def known(self) -> list[dict]:
        """The entries locate found that describe this failure: those whose signature matches what the step
        printed, else those matching the culprit, else any that fit."""
        fits = [k for k in self.located.known if k["fits"]]
        for group in ([k for k in fits if k["evidence"]], [k for k in fits if k["on_culprit"]], fits):
            if group:
                return group
        return []

    def signature(self) -> dict:
        """The observed signature, as a KB entry's front matter states one (kb new --from reads it)."""
        o = self.outcome
        if o is None:
            return {}
        if o.fate is not None:
            step = STEP_OF.get((self.engine, o.fate.stage), "ncnn")
            if o.fate.signal or o.fate.kind == "timeout":
                return {"kind": "crash", "pattern": "SIGSEGV|SIGBUS|SIGABRT" if o.fate.signal in L.MEMORY
                        else (o.fate.signal or "timeout"), "example": o.fate.line, "step": step}
            return {"kind": "log", "pattern": re.escape(o.fate.line[:80]), "example": o.fate.line, "step": step}
        c = o.culprit or {}
        d = L.Diff(c["kind"], c.get("max_abs"), c.get("max_rel"), c.get("atol"), c.get("nan", 0), c.get("shape"),
                   c.get("expected_shape"))
        return {"kind": c["kind"], "example": f"{c['node']['op']}: {d.text()}", "step": None}

    def json(self) -> dict:
        o = self.outcome
        return {"model": str(self.model), "engine": {"name": self.engine, "version": self.version},
                "failed": self.target is not None, "signature": self.target.text() if self.target else None,
                "nodes_before": self.nodes_before, "nodes": self.nodes,
                "ops": dict(Counter(n.op_type for n in o.model.graph.node)) if o else {},
                "inputs": {k: list(v.shape) for k, v in o.arrays.items()} if o else {},
                "observed": self.signature(), "culprit": o.culprit if o else None,
                "known": [{k: x[k] for k in ("id", "entry", "title", "url")} for x in self.known()],
                "saved": self.saved, "tries": self.tries, "kept": self.kept, "seconds": round(self.seconds, 1),
                "budget_spent": self.budget_spent, "notes": self.notes, "located": self.located.json()}


# ------------------------------------------------------------------------------------------- candidates

class Cutter:
    """Builds candidate models from a set of the original graph's nodes: every tensor such a set consumes and
    does not produce becomes an initializer (weights, constants, integer tensors) or a graph input fed with
    its value in the whole model."""

    def __init__(self, g: L.Graph, values: dict[str, np.ndarray], synthetic: set[str] | None = None):
        import onnx
        from onnx import numpy_helper

        self.g = g
        self.synthetic = synthetic or set()  # random values, not the model's: fed as inputs, never folded
        self.values = dict(values)
        self.inits = {t.name: t for t in g.model.graph.initializer}
        for i, n in enumerate(g.nodes):  # Constant outputs are not in the reference: their own values
            if n.op_type == "Constant" and n.output[0] not in self.values:
                try:
                    from onnx.reference import ReferenceEvaluator

                    one = onnx.helper.make_graph([n], "c", [], [onnx.ValueInfoProto(name=n.output[0])])
                    m = onnx.helper.make_model(one, opset_imports=list(g.model.opset_import))
                    self.values[n.output[0]] = np.asarray(ReferenceEvaluator(m).run(None, {})[0])
                except Exception:  # noqa: BLE001 -- a Constant we cannot evaluate stays a node
                    pass
        self.np2onnx = onnx.helper.np_dtype_to_tensor_dtype
        self.numpy_helper = numpy_helper
        self.types = {vi.name: vi.type.tensor_type.elem_type
                      for vi in [*g.model.graph.value_info, *g.model.graph.input, *g.model.graph.output]}

    def constant(self, t: str) -> bool:
        p = self.g.producer.get(t)
        return t in self.inits or (p is not None and not self.g.computed(p) and t in self.values)

    def build(self, keep: set[int], shapes: dict[str, np.ndarray] | None = None, fold: bool = True):
        """(model, feed) for the nodes `keep` (indices into the original graph), or None where a tensor
        has no value to feed. `shapes`: arrays that replace the fed values of some inputs (shrunk). `fold`:
        constants computed by nodes become initializers; else those nodes are kept (a converter may fail on
        a weight that is computed, not stored)."""
        import onnx

        g = self.g
        if not fold:
            keep = set(keep) | {a for i in keep for a in g.ancestors(i) if not g.computed(a)}
        nodes = [g.nodes[i] for i in sorted(keep)]
        produced = {t for n in nodes for t in n.output if t}
        consumed: list[str] = []
        for n in nodes:
            consumed += [t for t in n.input if t and t not in produced]
        inits, inputs, feed, rename = [], [], {}, {}
        for t in dict.fromkeys(consumed):
            if t in self.inits:
                inits.append(self.inits[t])
            elif t in self.values and t not in self.synthetic and (
                    self.constant(t) or self.values[t].dtype.kind in "iub" and t not in g.inputs):
                inits.append(self.numpy_helper.from_array(np.asarray(self.values[t]), t))
            elif t in self.values:
                name = t if _NAME.match(t) else f"input{len(inputs)}"
                rename[t] = name
                a = (shapes or {}).get(name, self.values[t])
                feed[name] = a
                inputs.append(onnx.helper.make_tensor_value_info(name, self.np2onnx(a.dtype), list(a.shape)))
            else:
                return None
        consumers = {t for n in nodes for t in n.input}
        outs = [t for n in nodes for t in n.output if t and (t not in consumers or t in g.outputs)]
        for k, t in enumerate(outs):  # names a report can show: output0, ... where the model's are paths
            if not _NAME.match(t):
                rename[t] = f"output{k}"
        outputs = [onnx.helper.make_tensor_value_info(
            rename.get(t, t),
            self.np2onnx(self.values[t].dtype) if t in self.values else self.types.get(t, onnx.TensorProto.FLOAT),
            None) for t in outs]
        copies = []
        for n in nodes:
            c = onnx.NodeProto()
            c.CopyFrom(n)
            for k, t in enumerate(c.input):
                if t in rename:
                    c.input[k] = rename[t]
            for k, t in enumerate(c.output):
                if t in rename:
                    c.output[k] = rename[t]
            copies.append(c)
        graph = onnx.helper.make_graph(copies, "reduced", inputs, outputs, inits)
        m = onnx.helper.make_model(graph, opset_imports=list(g.model.opset_import), producer_name="kb reduce")
        m.ir_version = g.model.ir_version
        m.functions.extend(g.model.functions)
        return m, feed


def _synthetic(g: L.Graph, values: dict[str, np.ndarray], seed: int) -> tuple[dict[str, np.ndarray], set[str]]:
    """Seeded random values for the tensors shape inference gives a static shape and type (floats normal,
    integers small and non-negative), where onnxruntime gives none."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(g.model)
    except Exception:  # noqa: BLE001 -- nothing inferred: nothing to feed a cut with
        return values, set()
    rng = np.random.default_rng(seed)
    out, made = dict(values), set()
    for vi in inferred.graph.value_info:
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
        if vi.name in out or not tt.elem_type or not tt.HasField("shape") or min(dims, default=1) < 1:
            continue
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        out[vi.name] = (rng.standard_normal(dims).astype(dtype) if dtype.kind == "f"
                        else rng.integers(0, 2, dims).astype(dtype))
        made.add(vi.name)
    return out, made


def _ddmin(items: list[int], test) -> list[int]:
    """The smallest subset of `items` (by removal: chunks, then single items) for which test(subset) holds,
    given that it holds for `items` (Zeller's ddmin, complements only)."""
    n = 2
    while len(items) >= 1:
        chunk = max(1, -(-len(items) // n))
        parts = [items[k:k + chunk] for k in range(0, len(items), chunk)]
        for part in parts:
            rest = [x for x in items if x not in part]
            r = test(rest)
            if r is None:
                return items  # out of time
            if r:
                items, n = rest, max(n - 1, 2)
                break
        else:
            if chunk == 1:
                return items
            n = min(len(items), n * 2)
    return items


# --------------------------------------------------------------------------------------------- checking

class OutOfTime(Exception):
    pass


class Reducer:
    def __init__(self, p: L.Prepared, target: Target, work: Path, say: L.Say, timeout: float, tol: float,
                 deadline: float):
        self.p, self.target, self.work, self.say, self.timeout, self.tol = p, target, work, say, timeout, tol
        self.deadline = deadline
        self.runner = L.Runner(p.engine, work, say, timeout)
        self.tries = self.kept = 0
        self.what = ""
        self.best: Outcome | None = None
        self.seen: dict[str, Outcome | None] = {}
        self.need_ref = True  # onnxruntime must run every candidate (it runs the original)
        self.outside = p.g.outside  # initializers kept in external data, as the user's file keeps them
        self.floor = 0.0  # wrong values: the smallest max abs difference a candidate must keep

    def check(self, built) -> Outcome | None:
        """The candidate's outcome when it fails as the target does, else None."""
        if built is None:
            return None
        if time.monotonic() > self.deadline:
            raise OutOfTime
        model, feed_arrays = built
        key = hashlib.sha1(model.SerializeToString()
                           + b"".join(np.ascontiguousarray(a).tobytes() for a in feed_arrays.values())).hexdigest()
        if key in self.seen:  # the same candidate, built twice (nothing to fold): its answer
            return self.seen[key]
        self.seen[key] = None
        self.tries += 1
        # a candidate never waits much past the budget (a hang would otherwise take the whole step timeout)
        self.runner.timeout = min(self.timeout, max(10.0, self.deadline - time.monotonic()))
        path = save_onnx(model, self.work / f"cand{self.tries}.onnx", self.outside)
        feed = self.work / f"cand{self.tries}.inputs.npz"
        np.savez(feed, **feed_arrays)
        g = L.Graph.of(model, path)
        plain = self.runner.say
        self.runner.say = lambda s: self.say(f"{self.what} (try {self.tries}, {len(model.graph.node)} nodes): {s}")
        try:
            ref, why = L.reference(g, feed, self.work, self.runner.say, self.runner.timeout)
            t = self.target
            if not ref and (self.need_ref or t.fate is None):
                return None  # onnxruntime rejects it: not a valid model (a shape it cannot take)
            if t.fate is not None:
                r = self.runner.read(g, path, feed, [], until=t.fate.stage)
                if not t.fate.same(r.fate):
                    return None
                out = Outcome(model, feed_arrays, ref, fate=r.fate)
            else:
                ref = {**feed_arrays, **ref}
                wanted = [x for x, a in ref.items() if a.dtype.kind in "fiub" and x not in g.outputs]
                r = self.runner.read(g, path, feed, wanted)
                if r.fate is not None:
                    return None
                culprit, *_ = L.confirmed(g, ref, r, self.tol, self.runner, self.runner.say, [])
                if culprit is None or culprit["node"]["op"] != t.op or culprit["kind"] != t.kind:
                    return None
                if self.floor and (culprit.get("max_abs") or 0.0) < self.floor:
                    return None  # still beyond the tolerance, but by far less: a repro that rounding could flip
                got = L._by_value(g, ref, r.got, self.tol) if r.by_value else r.got
                out = Outcome(model, feed_arrays, ref, culprit=culprit, got=got.get(culprit["tensor"]))
        finally:
            self.runner.say = plain
        out.name = path.stem
        self.seen[key] = out
        self.kept += 1
        self.best = out
        return out


def _start(g: L.Graph, culprit: dict) -> tuple[int | None, list[int]]:
    """The culprit's index and the computing nodes to reduce from: its ancestors (wrong values), the smallest
    failing prefix (a failure), the whole graph (a failure that is no node's)."""
    computed = [i for i in range(len(g.nodes)) if g.computed(i)]
    if culprit["node"] is None:
        return None, computed
    c = g.names.index(culprit["node"]["name"])
    if culprit["kind"] in ("mismatch", "nan", "shape"):
        return c, [i for i in g.ancestors(c) if g.computed(i)]
    return c, [i for i in computed if i < c]


def run_reduction(p: L.Prepared, located: L.Located, budget: float, say: L.Say, timeout: float, tol: float,
                  work: Path, seed: int = 0, reference: dict | None = None) -> Reduced:
    """`reference`: onnxruntime's values on the whole model as locate computed them (L.locate's keep_reference),
    else they are computed here."""
    started = time.monotonic()
    g = p.g
    red = Reduced(g.path, p.engine, p.version, None, located, sum(n.op_type != "Constant" for n in g.nodes))
    c = located.culprit
    if c is None:
        red.seconds = time.monotonic() - started
        return red
    if c["kind"] in ("mismatch", "nan", "shape"):
        target = Target(None, c["node"]["op"], c["kind"])
    else:
        target = Target(L.Fate(c["stage"], c["kind"], c.get("signal"), c.get("error", ""), c.get("step", "")))
    red.target = target
    # every tensor's value in the whole model, to feed a cut with
    if reference:
        ref, no_ref = reference["ref"], reference["no_ref"]
    else:
        feed = work / "inputs.npz"
        np.savez(feed, **p.arrays)
        ref, no_ref = L.reference(g, feed, work, say, timeout)
    values = {**p.arrays, **ref}
    synthetic: set[str] = set()
    if not ref:  # onnxruntime cannot run the model (a custom op): cut tensors get seeded random values
        values, synthetic = _synthetic(g, values, seed)
        red.notes.append(f"no reference values ({no_ref}); the cut tensors are fed seeded random values of the "
                         "shapes ONNX shape inference gives, and there are no expected outputs")
    cutter = Cutter(g, values, synthetic)
    rd = Reducer(p, target, work, say, timeout, tol, started + budget)
    rd.need_ref = bool(ref)
    culprit_i, rest = _start(g, c)
    fold = True
    try:
        rd.what = "cutting"
        alone = None  # the culprit alone fails the same way: with its constants folded (True) or kept (False)
        for f in (True, False) if culprit_i is not None else ():
            if rd.check(cutter.build({culprit_i}, fold=f)):
                alone = f
                break
        if alone is not None:
            keep, fold = {culprit_i}, alone
        else:
            base = {culprit_i} if culprit_i is not None else set()
            prefix = [i for i in range(culprit_i) if g.computed(i)] if culprit_i is not None else rest
            for nodes, f in ((rest, True), (rest, False), (prefix, True), (prefix, False)):
                if rd.check(cutter.build(base | set(nodes), fold=f)):
                    rest, fold = nodes, f
                    break
            else:
                red.notes.append("no cut around the culprit fails the same way (constants folded or kept as nodes, "
                                 "its ancestors or the whole prefix): nothing reduced")
                raise OutOfTime
            rd.what = "removing nodes"

            def test(subset):
                try:
                    return bool(rd.check(cutter.build(base | set(subset), fold=fold)))
                except OutOfTime:
                    return None
            keep = base | set(_ddmin(list(rest), test))
        rd.what = "shrinking inputs"
        if rd.best is not None and rd.best.culprit and rd.best.culprit.get("max_abs"):
            # smaller inputs must keep the difference the cut shows (half of it), not merely the tolerance
            rd.floor = max(rd.best.culprit["max_abs"] / 2, rd.best.culprit.get("atol") or 0.0)
        shapes: dict[str, np.ndarray] = {}
        built = cutter.build(keep, shapes, fold)
        floats = {k: a for k, a in built[1].items() if a.dtype.kind == "f" and a.size > 1}
        ones = {k: a[tuple(slice(0, 1) for _ in a.shape)] for k, a in floats.items()}
        if floats and rd.check(cutter.build(keep, ones, fold)):  # every dimension 1 at once: one try
            shapes = ones
            floats = {}
        for name, a0 in floats.items():
            for axis in range(a0.ndim):
                first = True
                while True:
                    a = shapes.get(name, a0)
                    if a.shape[axis] <= 1:
                        break
                    # 1 at once, else halves while it still fails
                    n = 1 if first and a.shape[axis] > 2 else a.shape[axis] // 2
                    cut = np.take(a, range(n), axis=axis)
                    if rd.check(cutter.build(keep, {**shapes, name: cut}, fold)):
                        shapes = {**shapes, name: cut}
                    elif not first or n == a.shape[axis] // 2:
                        break
                    first = False
        rd.what = "replacing weights"
        _randomize(rd, seed)
    except OutOfTime:
        red.budget_spent = time.monotonic() > started + budget
    red.outcome = rd.best
    red.tries, red.kept = rd.tries, rd.kept
    red.seconds = time.monotonic() - started
    if red.budget_spent:
        red.notes.append(f"the time budget ran out after {budget:.0f} s of reducing: the smallest model found so far "
                         "is kept")
    return red


def _randomize(rd: Reducer, seed: int) -> None:
    """Float initializers of more than 16 values -> seeded random values of the same shape, mean and spread."""
    import onnx
    from onnx import numpy_helper

    base = rd.best
    if base is None:
        return
    rng = np.random.default_rng(seed)
    large = [k for k, t in enumerate(base.model.graph.initializer)
             if t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE) and np.prod(t.dims) > 16]

    def swapped(model, which):
        m = onnx.ModelProto()
        m.CopyFrom(model)
        for k in which:
            a = numpy_helper.to_array(m.graph.initializer[k])
            new = (rng.standard_normal(a.shape) * (a.std() or 1.0) + a.mean()).astype(a.dtype)
            m.graph.initializer[k].CopyFrom(numpy_helper.from_array(new, m.graph.initializer[k].name))
        return m

    if not large or rd.check((swapped(base.model, large), base.arrays)):
        return
    for k in large:
        cur = rd.best
        rd.check((swapped(cur.model, [k]), cur.arrays))


# --------------------------------------------------------------------------------------------- saving

def save(red: Reduced, out: Path, outside: set[str] = frozenset()) -> dict[str, str]:
    o = red.outcome
    stem = out.with_suffix("") if out.suffix == ".onnx" else out
    files = {"model": out, "inputs": Path(f"{stem}.inputs.npz"), "expected": Path(f"{stem}.expected.npz"),
             "report": Path(f"{stem}.json")}
    out.parent.mkdir(parents=True, exist_ok=True)
    save_onnx(o.model, out, outside)
    if out.with_name(out.name + ".data").is_file():
        files["data"] = out.with_name(out.name + ".data")
    np.savez(files["inputs"], **o.arrays)
    np.savez(files["expected"], **{t.name: o.ref[t.name] for t in o.model.graph.output if t.name in o.ref})
    red.saved = {k: str(v) for k, v in files.items()}
    files["report"].write_text(json.dumps(red.json(), indent=1))
    return red.saved


def _dims(a) -> str:
    return "×".join(map(str, a.shape)) or "scalar"


def markdown(red: Reduced) -> str:
    o = red.outcome
    where = f"{red.engine} {red.version}" if red.version else red.engine
    ops = Counter(n.op_type for n in o.model.graph.node)
    model = red.saved.get("model", "reduced.onnx")
    name = Path(model).name
    opset = max((x.version for x in o.model.opset_import if x.domain in ("", "ai.onnx")), default=None)
    lines = [f"## {where}: {red.target.text()}", "",
             f"Reduced by `kb reduce` from {red.nodes_before} to {red.nodes} node{'s' * (red.nodes != 1)} "
             f"({red.tries} candidates tried, {red.seconds:.0f} s), still failing the same way.", "",
             f"**Model** `{name}` (opset {opset}): " + ", ".join(f"{op} ×{k}" if k > 1 else op
                                                                 for op, k in ops.items()), ""]
    lines += ["| | name | shape | dtype |", "| --- | --- | --- | --- |"]
    lines += [f"| input | `{k}` | {_dims(v)} | {v.dtype} |" for k, v in o.arrays.items()]
    lines += [f"| output | `{t.name}` | {_dims(o.ref[t.name])} | {o.ref[t.name].dtype} |"
              for t in o.model.graph.output if t.name in o.ref]
    for n in o.model.graph.node:
        import onnx

        attrs = {a.name: L._jsonable(onnx.helper.get_attribute_value(a)) for a in n.attribute}
        if attrs:
            lines.append(f"\n`{n.op_type}` attributes: " + ", ".join(f"{k}={v}" for k, v in attrs.items()))
    stem = Path(model).with_suffix("").name
    shapes = ",".join(f"[{','.join(map(str, a.shape))}]" for a in o.arrays.values())
    inputs, expected = Path(red.saved.get("inputs", "")).name, Path(red.saved.get("expected", "")).name
    lines += ["", f"**Reproduce** (inputs in `{inputs}`, onnxruntime's outputs in `{expected}`):", "", "```",
              COMMANDS[red.engine].format(m=name, s=stem, shapes=shapes),
              f"kb locate {name} --engine {red.engine} --inputs {inputs}", "```", ""]
    if o.fate is not None:
        how = f"killed by {o.fate.signal}" if o.fate.signal else o.fate.kind
        step = o.fate.step.replace(o.name, stem) if o.name else o.fate.step
        lines.append(f"**Observed** on {where}, step `{step}`: {how}")
        if o.fate.line:
            said = "the last line it printed" if o.fate.signal or o.fate.kind == "timeout" else "its first error line"
            lines.append(f"\n{said}:\n\n```\n{o.fate.line}\n```")
        shown = ", ".join(f"{t.name} {_dims(o.ref[t.name])}" for t in o.model.graph.output if t.name in o.ref)
        ort = f"onnxruntime runs it ({shown})" if shown else "onnxruntime cannot run it either (no expected outputs)"
        lines.append(f"\n**Expected**: it {'converts' if o.fate.stage == 'convert' else 'runs'}; {ort}.")
    else:
        c = o.culprit
        d = L.Diff(c["kind"], c.get("max_abs"), c.get("max_rel"), c.get("atol"), c.get("nan", 0), c.get("shape"),
                   c.get("expected_shape"))
        lines.append(f"**Observed** on {where}: `{c['node']['op']}` output `{c['tensor']}`: {d.text()}")
        exp = o.ref.get(c["tensor"])
        if exp is not None and o.got is not None:
            e, g = exp.ravel()[:6], np.asarray(o.got).ravel()[:6]
            lines += ["", "| | first values |", "| --- | --- |",
                      f"| expected (onnxruntime) | {', '.join(f'{v:.4g}' for v in e)} |",
                      f"| observed ({red.engine}) | {', '.join(f'{v:.4g}' for v in g)} |"]
    known = red.known()
    lines.append("")
    if known:
        lines += [f"**Known**: [{k['id']}: {k['title']}]({k['url']})" for k in known]
    else:
        lines.append(f"no known entry: `kb new <slug> --engine {red.engine} --from {model}`")
    lines += [f"\nnote: {n}" for n in red.notes]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command

def reduce(model: str | L.Prepared, engine: str = "", out: str | Path = "reduced.onnx", inputs: str | None = None,
           budget: float = BUDGET, say: L.Say | None = None, timeout: float = L.STEP_TIMEOUT,
           tol: float | None = None) -> Reduced:
    """Locate, then reduce (see the module's docstring); saves the reduced files when something fails."""
    p = model if isinstance(model, L.Prepared) else L.prepare(model, engine, None, inputs)
    say = say or (lambda _: None)
    tol = L.ENGINE_TOL[p.engine] if tol is None else tol
    kept: dict = {}  # onnxruntime's values on the whole model: locate's, not computed twice
    located = L.locate(p, tol=tol, say=lambda s: say(f"locating: {s}"), timeout=timeout, keep_reference=kept)
    with tempfile.TemporaryDirectory(prefix="kb-reduce-") as tmp:
        # the budget is the whole command's, locating and saving included: what a user waits for
        red = run_reduction(p, located, max(budget - located.seconds - SAVING, 1.0), say, timeout, tol, Path(tmp),
                            reference=kept)
    if red.outcome is not None:
        save(red, Path(out), p.g.outside)
    return red


def command(model: str, engine: str, out: str, inputs: str | None, as_json: bool, budget: float, timeout: float,
            tol: float | None = None, progress=None) -> int:
    """`kb reduce`: 1 when a reduced model is written, 0 when the model does not fail (nothing written)."""
    from kb.match.status import parse_engines

    wanted = parse_engines([engine])[0]
    if not str(out).endswith(".onnx"):
        raise KBError("-o", f"{out!r}: the reduced model's file name must end in .onnx", codes.BAD_INPUTS)
    if budget <= 0:
        raise KBError("--budget", f"{budget}: expected a number of seconds above 0", codes.BAD_INPUTS)
    prepared = L.prepare(model, wanted.engine, wanted.version, inputs)
    with progress if progress is not None else nullcontext():
        task = progress.add_task("kb reduce", total=None) if progress is not None else None
        say = (lambda s: progress.update(task, description=s)) if progress is not None else None
        red = reduce(prepared, out=out, budget=budget, say=say, timeout=timeout, tol=tol)
    if red.target is None:
        msg = (f"{model}: no failure on {red.engine} {red.version or ''}".rstrip() +
               f": it converts and runs, {red.located.compared} tensors within tolerance; nothing to reduce, "
               "nothing written")
        print(json.dumps(red.json(), indent=1) if as_json else msg)
        return codes.NOTHING_FOUND
    if red.outcome is None:
        print(json.dumps(red.json(), indent=1) if as_json else
              f"{model}: {red.target.text()}, but no cut of it fails the same way; nothing written"
              + "".join(f"\nnote: {n}" for n in red.notes))
        return codes.FOUND
    print(json.dumps(red.json(), indent=1) if as_json else markdown(red))
    return codes.FOUND
