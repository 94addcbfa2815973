"""Torch side: turn an entry's reproducer cases into ONNX files, inputs and reference outputs.

Runs in a child, never in the parent: a fork of a Python that loaded torch (warm(), kb.forkserver) per entry, or
one fresh process for a batch of entries (export_entries).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.ways import OPSET, WAYS, ways_of


@dataclass
class Case:
    """One model of a reproducer, and how to export it."""

    name: str
    module: Any  # torch.nn.Module
    inputs: tuple  # example input tensors
    input_names: list[str] | None = None  # default: in0, in1, ...
    output_names: list[str] | None = None  # default: out0, out1, ...
    opset: int = OPSET
    dynamo: bool = field(kw_only=True)  # required: torch 2.13's default exporter (dynamo) rewrites graphs
    trigger: bool = True  # False for control models, which must NOT contain the trigger pattern
    # A workaround's model: the name of the case it rewrites. It must be fed the same inputs, and its
    # engine output is judged against THAT case's torch output, so a rewrite that changes results is broken.
    rewrites: str | None = None
    # A variant (yielded by variants()) has no label: the engine run decides whether it is affected,
    # and the entry's contract compares that with the trigger pattern.
    variant: bool = False
    torchscript: bool = False  # also save a traced TorchScript file (for pnnx)
    export_kwargs: dict = field(default_factory=dict)
    simplify: bool = False  # run onnxsim on the export, as many users do before converting
    # Quantize the export with onnxruntime, as users do: {"method": "static"|"dynamic", "fmt": "QDQ"|
    # "QOperator", **options}. The case's ONNX file is then the quantized model.
    quantize: dict | None = None
    # A change to the exported graph, in place (onnx.ModelProto -> None), for a graph torch never writes but
    # another tool does (an attribute left at its default, say). Applied last; the case's ONNX file is the result.
    edit: Any = None
    # Also export the model each other way users do (kb.ways.WAYS, or the names listed), as variants <name>-<way>.
    ways: bool | list[str] = False


def _with_ways(case: Case) -> list[Case]:
    out = [case]
    for vname, way in ways_of(case.name, case.ways, case.opset, case.dynamo, case.simplify).items():
        opset, dynamo, simplify = WAYS[way]
        kwargs = {**case.export_kwargs, **({"external_data": False} if dynamo else {})}
        out.append(dataclasses.replace(case, name=vname, opset=opset, dynamo=dynamo, simplify=simplify, ways=False,
                                       variant=True, export_kwargs=kwargs, rewrites=None, torchscript=False))
    return out


def _one_way(case: Case) -> Case:
    if case.ways:
        raise ValueError(f"variant {case.name!r}: ways= is read in cases() only; a variant is one export")
    return case


def export_entry(repro: str, out: str) -> dict:
    """Export every case of `repro` into folder `out`; return the manifest."""
    import numpy as np
    import torch

    _registry_once()
    spec = importlib.util.spec_from_file_location("kb_repro", repro)
    module = importlib.util.module_from_spec(spec)
    sys.modules["kb_repro"] = module  # dynamo's torch.cond imports the module its branches come from, by name
    spec.loader.exec_module(module)
    outdir = Path(out)
    manifest: dict[str, dict] = {}
    variants = getattr(module, "variants", lambda: [])
    for case in [*(w for c in module.cases() for w in _with_ways(c)),
                 *(dataclasses.replace(_one_way(v), variant=True) for v in variants())]:
        model = case.module.eval()
        with torch.no_grad():
            result = model(*case.inputs)
        results = result if isinstance(result, (tuple, list)) else (result,)
        case = dataclasses.replace(case, input_names=case.input_names or [f"in{i}" for i in range(len(case.inputs))],
                                   output_names=case.output_names or [f"out{i}" for i in range(len(results))])
        onnx_path = outdir / f"{case.name}.onnx"
        try:
            torch.onnx.export(model, case.inputs, str(onnx_path), dynamo=case.dynamo, opset_version=case.opset,
                              input_names=case.input_names, output_names=case.output_names, **case.export_kwargs)
        except Exception as e:  # noqa: BLE001 -- the exporter refusing one case fails that case's checks only
            line = next((ln for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
            manifest[case.name] = {"error": f"torch.onnx.export failed: {type(e).__name__}: {line}"[:400],
                                   "variant": case.variant, "trigger": None if case.variant else case.trigger,
                                   "rewrites": case.rewrites}
            continue
        np.savez(outdir / f"{case.name}.inputs.npz",
                 **{n: t.numpy() for n, t in zip(case.input_names, case.inputs)})
        np.savez(outdir / f"{case.name}.reference.npz",
                 **{n: t.numpy() for n, t in zip(case.output_names, results)})
        if case.simplify:
            _simplify(onnx_path)
        if case.quantize:
            _quantize(onnx_path, outdir / f"{case.name}.inputs.npz", dict(case.quantize))
        if case.edit:
            _edit(onnx_path, case.edit)
        item = {"onnx": onnx_path.name, "trigger": None if case.variant else case.trigger, "variant": case.variant,
                "opset": case.opset, "dynamo": case.dynamo, "quantize": case.quantize, "edited": bool(case.edit),
                "rewrites": case.rewrites,
                "inputs": {n: list(t.shape) for n, t in zip(case.input_names, case.inputs)},
                "outputs": case.output_names}
        if case.torchscript:
            with torch.no_grad():
                torch.jit.trace(model, case.inputs).save(str(outdir / f"{case.name}.pt"))
            item["torchscript"] = f"{case.name}.pt"
        manifest[case.name] = item
    _check_rewrites(manifest, outdir)
    (outdir / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def warm() -> None:
    """In kb.forkserver's server, before it forks an export per entry: load torch, its exporters and onnxsim, and build
    what every export builds first (the registry, the tables, the exporters' own lazy imports) with a one-op model.
    On one thread, so that no thread pool exists to be lost in a fork; each fork has torch's default again."""
    import contextlib
    import io
    import tempfile

    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)

    class One(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + 1

    _registry_once()
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        for dynamo, opset in ((True, 18), (True, OPSET), (False, OPSET)):
            torch.onnx.export(One().eval(), (torch.ones(1, 3),), f"{tmp}/one.onnx", dynamo=dynamo, opset_version=opset)
        _simplify(Path(f"{tmp}/one.onnx"))  # onnxsim and the onnxruntime it loads: 0.3 s of each entry's export otherwise
    torch.set_num_threads(threads)


def _registry_once() -> None:
    """torch's dynamo exporter builds its registry of torchlib's ONNX functions again for every export, reading
    the source of each of ~500 functions: 60% of an export's time here. It is the same registry every time
    (torch pinned) but for the last step, which keeps each op's functions valid at the opset. So the functions are
    read once per process, before that step; each export gets its own copy (an export's custom_translation_table
    adds to it), then that step at its opset (the server warms at 18; a fork exporting at opset 20 read them all
    again, 2.4 s)."""
    try:
        from torch.onnx._internal.exporter._registration import ONNXRegistry
    except ImportError:  # another torch: each export builds its own, as before
        return
    build = ONNXRegistry.from_torchlib.__func__
    if getattr(build, "kb_once", False) or not hasattr(ONNXRegistry, "_cleanup_registry_based_on_opset_version"):
        return  # done, or another torch: each export builds its own
    read: dict = {}

    def from_torchlib(cls, opset_version=None):
        if cls not in read:
            keep = cls._cleanup_registry_based_on_opset_version
            cls._cleanup_registry_based_on_opset_version = lambda self: None
            try:
                read[cls] = build(cls)
            finally:
                cls._cleanup_registry_based_on_opset_version = keep
        registry = cls()
        registry._opset_version = read[cls]._opset_version if opset_version is None else opset_version
        registry.functions = {k: list(v) for k, v in read[cls].functions.items()}
        registry._cleanup_registry_based_on_opset_version()
        return registry

    from_torchlib.kb_once = True
    ONNXRegistry.from_torchlib = classmethod(from_torchlib)
    _tables_once()


def _tables_once() -> None:
    """Three more tables every dynamo export rebuilds: the C++ composite ops it materializes (once per op namespace,
    twice per export), the composite ops of every namespace it may keep, and the ONNX-friendly decomposition table.
    Each is kept while what it is computed from stays the same: the dispatcher's registrations and namespaces, and
    the ops the registry implements."""
    try:
        from torch._export import utils as export_utils
        from torch.onnx._internal.exporter import _decomp
    except ImportError:
        return
    import torch

    materialize = export_utils._materialize_cpp_cia_ops
    done: set[tuple] = set()

    def materialize_once() -> None:
        key = tuple(torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd"))
        if key not in done:
            materialize()
            done.add(key)

    table = _decomp.create_onnx_friendly_decomposition_table
    tables: dict = {}

    def table_once(onnx_registered_ops):
        # run_decompositions copies the table before it changes it
        key = (frozenset(onnx_registered_ops), len(torch._decomp.decomposition_table))
        if key not in tables:
            tables[key] = table(onnx_registered_ops)
        return tables[key]

    collect = export_utils._collect_all_valid_cia_ops
    collected: dict = {}

    def collect_once():
        # every namespace's ops are walked again for each export (a fifth of its decompositions); callers copy it
        key = (tuple(torch.ops._dir), tuple(torch._C._dispatch_get_registrations_for_dispatch_key(
            "CompositeImplicitAutograd")))
        if key not in collected:
            collected[key] = frozenset(collect())
        return set(collected[key])

    export_utils._materialize_cpp_cia_ops = materialize_once
    _decomp.create_onnx_friendly_decomposition_table = table_once
    from torch.export import decomp_utils, exported_program

    for module in (export_utils, exported_program, decomp_utils):  # each imported it by name
        module._collect_all_valid_cia_ops = collect_once
    _py_impl_lazy()
    _override_once()


def _override_once() -> None:
    """run_decompositions overrides the kernels of each composite op it keeps (about 700) for the export and puts
    them back after: twice per export, half a small one's time. From the same kernels and the same decompositions
    it makes the same overrides, so torch's own override runs once per such start, and later ones swap its result
    in and put back what was there, as torch's does on the way out (fake-tensor rule included)."""
    import contextlib

    try:
        from torch._subclasses import fake_impls
        from torch.export import exported_program as ep
    except ImportError:
        return
    override = ep._override_composite_implicit_decomp
    if getattr(override, "kb_once", False):
        return
    made: dict = {}  # what torch's override left, keyed by what it started from

    def start(cia_ops_to_callable) -> tuple:
        return tuple((op, fn, tuple(op.py_kernels.items()), fake_impls._is_op_registered_to_fake_rule(op))
                     for op, fn in cia_ops_to_callable.items())

    @contextlib.contextmanager
    def override_once(cia_ops_to_callable):
        key = start(cia_ops_to_callable)
        if key not in made:
            with override(cia_ops_to_callable):
                made[key] = [(op, dict(op.py_kernels), fake_impls.op_implementations_dict.get(op)) for op, *_ in key]
                yield
            return
        saved = []
        for op, kernels, fake in made[key]:
            saved.append((op, op.py_kernels.copy()))
            op.py_kernels.clear()
            op.py_kernels.update(kernels)
            op._dispatch_cache.clear()
            if fake is not None and not fake_impls._is_op_registered_to_fake_rule(op):
                fake_impls.op_implementations_dict[op] = fake
        try:
            yield
        finally:
            for op, kernels in saved:
                op.py_kernels.clear()
                op.py_kernels.update(kernels)
                op._dispatch_cache.clear()
                fake_impls._deregister_op_impl(op)

    override_once.kb_once = True
    ep._override_composite_implicit_decomp = override_once


def _py_impl_lazy() -> None:
    """Every dynamo export overrides each composite op's kernels and puts them back: ~5,700 calls of torch's
    OperatorBase.py_impl, each of which evaluates its inner function's annotations (typing's Callable[...]) again,
    40% of a one-op model's export. The same source compiled with annotations left unevaluated (PEP 563)."""
    import __future__
    import ast
    import inspect
    import textwrap

    try:
        from torch import _ops
    except ImportError:
        return
    py_impl = _ops.OperatorBase.py_impl
    if getattr(py_impl, "kb_lazy", False):
        return
    try:
        lines, first = inspect.getsourcelines(py_impl)
        tree = ast.increment_lineno(ast.parse(textwrap.dedent("".join(lines))), first - 1)  # tracebacks point at torch
        code = compile(tree, inspect.getsourcefile(py_impl), "exec", flags=__future__.annotations.compiler_flag,
                       dont_inherit=True)
    except (OSError, TypeError, SyntaxError):  # no source to compile: each call evaluates them, as before
        return
    namespace: dict = {}
    exec(code, vars(_ops), namespace)
    namespace["py_impl"].kb_lazy = True
    _ops.OperatorBase.py_impl = namespace["py_impl"]


def _check_rewrites(manifest: dict, outdir: Path) -> None:
    """A rewrite is fed exactly the original's inputs: otherwise its outputs say nothing about the original."""
    import numpy as np

    for name, item in manifest.items():
        orig = item["rewrites"]
        if orig is None or "error" in item or "error" in manifest.get(orig, {}):
            continue
        if orig not in manifest or manifest[orig]["rewrites"]:
            raise ValueError(f"case {name!r} rewrites {orig!r}, which is not an original case of this reproducer")
        with np.load(outdir / f"{name}.inputs.npz") as a, np.load(outdir / f"{orig}.inputs.npz") as b:
            same = sorted(a.files) == sorted(b.files) and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a.files)
        if not same:
            raise ValueError(f"case {name!r} rewrites {orig!r} but is fed other inputs: give it the same tensors")


def export_entries(jobs: list[list[str]]) -> None:
    """export_entry for each [repro, out], in one process: torch and its exporters load once. One that
    fails leaves `out/failed.txt` and the others go on."""
    import traceback

    for repro, out in jobs:
        try:
            export_entry(repro, out)
        except Exception:  # noqa: BLE001 -- reported per entry; kb.artifacts exports it alone again
            (Path(out) / "failed.txt").write_text(traceback.format_exc()[-4000:])
        sys.stdout.flush()


def _edit(path: Path, edit) -> None:
    """Apply a case's edit to its ONNX file; weights the exporter put in external data stay there."""
    import onnx

    outside = {t.name for t in onnx.load(str(path), load_external_data=False).graph.initializer
               if t.data_location == onnx.TensorProto.EXTERNAL}
    model = onnx.load(str(path))
    edit(model)
    save_onnx(model, path, outside)


def save_onnx(model, path: Path, outside: set[str] = frozenset()) -> Path:
    """Save `model` (all its data in memory) to `path`; the initializers named in `outside` go to `<name>.data`
    beside it, as the file it came from kept them (where a weight is stored can be what a converter gets
    wrong); a model past protobuf's 2 GB limit goes there whole."""
    import onnx
    from onnx import external_data_helper as ext

    data = path.with_name(path.name + ".data")
    data.unlink(missing_ok=True)  # onnx appends to an existing data file
    if model.ByteSize() > 1_800_000_000:
        onnx.save(model, str(path), save_as_external_data=True, location=data.name)
        return path
    if not outside & {t.name for t in model.graph.initializer}:
        onnx.save(model, str(path))
        return path
    copy = onnx.ModelProto()
    copy.CopyFrom(model)  # the caller's model keeps its data in memory
    for t in copy.graph.initializer:
        if t.name in outside and t.HasField("raw_data"):
            ext.set_external_data(t, data.name)
    ext.write_external_data_tensors(copy, str(path.parent))
    onnx.save(copy, str(path))
    return path


def _simplify(path: Path) -> None:
    import onnx
    import onnxsim

    model, ok = onnxsim.simplify(onnx.load(str(path)))
    if not ok:
        raise RuntimeError(f"onnxsim could not validate the simplified {path.name}")
    onnx.save(model, str(path))


def _quantize(path: Path, inputs: Path, spec: dict) -> None:
    from kb.workers.onnxruntime import quantize

    float_path = path.with_suffix(".float.onnx")
    path.rename(float_path)
    quantize(str(float_path), str(inputs), str(path), spec.pop("method"), spec.pop("fmt", "QDQ"), spec)
