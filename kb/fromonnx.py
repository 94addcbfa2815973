"""`kb new SLUG --engine E --from reduced.onnx`: the entry's repro.py written from a reduced ONNX graph.

Each node whose op maps simply onto torch (Conv, Relu, Add, Mul, MatMul, Gemm as nn.Linear, Softmax, Transpose,
Reshape, Concat, Sigmoid, HardSwish, ...) becomes a line of a torch module; weights become the layers' own
(seeded random, as the KB's reproducers are); other constant operands are written out (16 values or fewer) or
random of their shape. An op that does not map is left as a TODO naming it, which raises until written.
The observed signature (kb reduce's <stem>.json beside the model) goes into the front matter as its example.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from kb.errors import KBError
from kb.match import codes

UNARY = {"Relu": "torch.relu({})", "Sigmoid": "torch.sigmoid({})", "Tanh": "torch.tanh({})",
         "HardSwish": "F.hardswish({})", "Exp": "torch.exp({})", "Log": "torch.log({})", "Sqrt": "torch.sqrt({})",
         "Abs": "torch.abs({})", "Neg": "-{}", "Erf": "torch.erf({})", "Floor": "torch.floor({})",
         "Ceil": "torch.ceil({})", "Reciprocal": "torch.reciprocal({})", "Sin": "torch.sin({})",
         "Cos": "torch.cos({})", "Identity": "{}", "Softplus": "F.softplus({})", "Mish": "F.mish({})"}
BINARY = {"Add": "{} + {}", "Sub": "{} - {}", "Mul": "{} * {}", "Div": "{} / {}", "Pow": "torch.pow({}, {})",
          "MatMul": "torch.matmul({}, {})", "Max": "torch.maximum({}, {})", "Min": "torch.minimum({}, {})"}


class Writer:
    def __init__(self, model):
        from onnx import numpy_helper

        self.m = model
        self.inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self.names: dict[str, str] = {}
        self.init_lines: list[str] = []
        self.body: list[str] = []
        self.todo: list[str] = []
        self.opset = max((x.version for x in model.opset_import if x.domain in ("", "ai.onnx")), default=13)

    def var(self, t: str) -> str:
        if t not in self.names:
            base = re.sub(r"\W", "_", t).strip("_") or "t"
            base = base if re.match(r"[A-Za-z_]", base) else f"t_{base}"
            name = base
            while name in self.names.values() or name in ("self", "torch", "F", "nn"):
                name += "_"
            self.names[t] = name
        return self.names[t]

    def operand(self, t: str) -> str:
        """A tensor as a torch expression: a value computed in forward, or a constant buffer."""
        if t in self.inits and t not in self.names:
            a = self.inits[t]
            name = self.var(t)
            dtype = "torch.float32" if a.dtype.kind == "f" else "torch.int64" if a.dtype.kind in "iu" else "torch.bool"
            if a.size <= 16:
                value = f"torch.tensor({a.tolist()!r}, dtype={dtype})"
            elif a.dtype.kind == "f":
                value = f"torch.randn({list(a.shape)})  # random values of the original's shape"
            else:
                value = f"torch.zeros({list(a.shape)}, dtype={dtype})  # TODO: the original's values"
            self.init_lines.append(f"self.register_buffer({name!r}, {value})")
            return f"self.{name}"
        return self.var(t) if t not in self.inits else f"self.{self.names[t]}"

    def const(self, t: str):
        return self.inits.get(t)

    def node(self, k: int, n) -> None:
        import onnx

        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        ins = [t for t in n.input]
        out = self.var(n.output[0]) if n.output else "_"
        op = n.op_type
        line = None
        try:
            line = self._map(k, op, a, ins)
        except (KeyError, IndexError, TypeError, ValueError):
            line = None
        if line is None:
            attrs = ", ".join(f"{x}={_show(v)}" for x, v in a.items())
            self.todo.append(op)
            self.body.append(f"# TODO: ONNX op {op}({attrs}) has no simple torch mapping here: write it")
            self.body.append(f"raise NotImplementedError('TODO: ONNX op {op} (node {n.name or k}): write it in torch')")
            if n.output:
                self.body.append(f"{out} = None")
            return
        if len([o for o in n.output if o]) > 1:
            self.body.append(f"# TODO: ONNX op {op} has {len(n.output)} outputs; only the first is written")
        self.body.append(f"{out} = {line}")

    def _map(self, k: int, op: str, a: dict, ins: list[str]) -> str | None:
        x = self.operand(ins[0]) if ins else None
        if op in UNARY:
            return UNARY[op].format(x)
        if op in BINARY:
            return BINARY[op].format(x, self.operand(ins[1]))
        if op == "Conv" and ins[1] in self.inits:
            w = self.inits[ins[1]]
            dims = w.ndim - 2
            if dims not in (1, 2, 3):
                return None
            pads = list(a.get("pads", [0] * 2 * dims))
            if pads[:dims] != pads[dims:] or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
                return None
            groups = a.get("group", 1)
            name = f"conv{k}"
            self.init_lines.append(
                f"self.{name} = nn.Conv{dims}d({w.shape[1] * groups}, {w.shape[0]}, {tuple(w.shape[2:])}, "
                f"stride={tuple(a.get('strides', [1] * dims))}, padding={tuple(pads[:dims])}, "
                f"dilation={tuple(a.get('dilations', [1] * dims))}, groups={groups}, "
                f"bias={len(ins) > 2 and bool(ins[2])})")
            return f"self.{name}({x})"
        if op == "Gemm" and ins[1] in self.inits and a.get("transA", 0) == 0 and a.get("alpha", 1.0) == 1.0 \
                and a.get("beta", 1.0) == 1.0:
            w = self.inits[ins[1]]
            out_f, in_f = (w.shape if a.get("transB", 0) else w.shape[::-1])
            name = f"linear{k}"
            self.init_lines.append(f"self.{name} = nn.Linear({in_f}, {out_f}, bias={len(ins) > 2 and bool(ins[2])})")
            return f"self.{name}({x})"
        if op == "Softmax":
            return f"torch.softmax({x}, dim={a.get('axis', -1 if self.opset >= 13 else 1)})"
        if op == "LogSoftmax":
            return f"torch.log_softmax({x}, dim={a.get('axis', -1 if self.opset >= 13 else 1)})"
        if op == "Transpose":
            if "perm" not in a:
                return f"{x}.permute(*reversed(range({x}.dim())))"
            return f"{x}.permute({', '.join(map(str, a['perm']))})"
        if op == "Reshape" and self.const(ins[1]) is not None:
            shape = [int(d) for d in self.const(ins[1])]
            parts = [f"{x}.shape[{i}]" if d == 0 else str(d) for i, d in enumerate(shape)]
            return f"{x}.reshape({', '.join(parts)})"
        if op == "Flatten":
            axis = a.get("axis", 1)
            return (f"torch.flatten({x}, 1)" if axis == 1 else f"{x}.reshape(1, -1)" if axis == 0
                    else f"torch.flatten(torch.flatten({x}, 0, {axis - 1}), 1)")
        if op == "Concat":
            return f"torch.cat([{', '.join(self.operand(t) for t in ins)}], dim={a['axis']})"
        if op == "HardSigmoid":
            return f"torch.clamp({a.get('alpha', 0.2)} * {x} + {a.get('beta', 0.5)}, 0, 1)"
        if op == "LeakyRelu":
            return f"F.leaky_relu({x}, {a.get('alpha', 0.01)})"
        if op == "Elu":
            return f"F.elu({x}, {a.get('alpha', 1.0)})"
        if op == "Gelu":
            return f"F.gelu({x}, approximate={a.get('approximate', b'none').decode()!r})"
        if op == "Clip":
            lo = self.const(ins[1]) if len(ins) > 1 and ins[1] else a.get("min")
            hi = self.const(ins[2]) if len(ins) > 2 and ins[2] else a.get("max")
            return f"torch.clamp({x}, {_num(lo)}, {_num(hi)})"
        if op in ("MaxPool", "AveragePool") and len(a.get("kernel_shape", [])) == 2:
            pads = list(a.get("pads", [0] * 4))
            if pads[:2] != pads[2:]:
                return None
            fn = "F.max_pool2d" if op == "MaxPool" else "F.avg_pool2d"
            return (f"{fn}({x}, {tuple(a['kernel_shape'])}, stride={tuple(a.get('strides', [1, 1]))}, "
                    f"padding={tuple(pads[:2])}, ceil_mode={bool(a.get('ceil_mode', 0))})")
        if op == "GlobalAveragePool":
            return f"{x}.mean(dim=tuple(range(2, {x}.dim())), keepdim=True)"
        if op in ("ReduceMean", "ReduceSum", "ReduceMax"):
            axes = a.get("axes") or (list(self.const(ins[1])) if len(ins) > 1 and ins[1] else None)
            fn = {"ReduceMean": "mean", "ReduceSum": "sum", "ReduceMax": "amax"}[op]
            if axes is None:
                return None
            return f"{x}.{fn}(dim={tuple(int(v) for v in axes)}, keepdim={bool(a.get('keepdims', 1))})"
        if op == "Squeeze":
            axes = a.get("axes") or (list(self.const(ins[1])) if len(ins) > 1 else None)
            return f"{x}.squeeze({tuple(int(v) for v in axes)})" if axes is not None else f"{x}.squeeze()"
        if op == "Unsqueeze":
            axes = a.get("axes") or list(self.const(ins[1]))
            expr = x
            for ax in sorted(int(v) for v in axes):
                expr = f"{expr}.unsqueeze({ax})"
            return expr
        return None


def _num(v) -> str:
    if v is None:
        return "None"
    return repr(float(np.asarray(v).ravel()[0]))


def _show(v) -> str:
    if isinstance(v, bytes):
        return repr(v.decode(errors="replace"))
    if hasattr(v, "dims"):
        return f"tensor{list(v.dims)}"
    return repr(v)


def _inputs(model, path: Path) -> list[tuple[str, list[int], str]]:
    arrays = {}
    npz = Path(f"{path.with_suffix('')}.inputs.npz")
    if npz.is_file():
        with np.load(npz) as z:
            arrays = {k: z[k] for k in z.files}
    inits = {t.name for t in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        if vi.name in arrays:
            shape, kind = list(arrays[vi.name].shape), arrays[vi.name].dtype.kind
        else:
            shape = [d.dim_value or 1 for d in vi.type.tensor_type.shape.dim]
            kind = "f" if vi.type.tensor_type.elem_type in (1, 10, 11, 16) else "i"
        out.append((vi.name, shape, kind))
    return out


def repro_source(path: Path, entry_id: str, slug: str) -> tuple[str, list[str]]:
    """repro.py for the ONNX model at `path`, and the ops left as TODO."""
    from kb.locate import load_model

    g = load_model(str(path))
    w = Writer(g.model)
    ins = _inputs(g.model, path)
    args = [w.var(name) for name, _, _ in ins]
    for k, n in enumerate(g.model.graph.node):
        if n.op_type == "Constant":  # its value, as an initializer would be
            import onnx

            try:
                from onnx.reference import ReferenceEvaluator

                one = onnx.helper.make_graph([n], "c", [], [onnx.ValueInfoProto(name=n.output[0])])
                m = onnx.helper.make_model(one, opset_imports=list(g.model.opset_import))
                w.inits[n.output[0]] = np.asarray(ReferenceEvaluator(m).run(None, {})[0])
                continue
            except Exception:  # noqa: BLE001 -- left as a TODO below
                pass
        w.node(k, n)
    outs = [w.operand(o.name) for o in g.model.graph.output]
    in_names = [name for name, _, _ in ins]
    out_names = [o.name for o in g.model.graph.output]
    made = [f"torch.randn({shape})" if kind == "f" else f"torch.randint(0, 4, {shape})" for _, shape, kind in ins]
    ops = ", ".join(dict.fromkeys(n.op_type for n in g.model.graph.node))
    todo = f" TODO: write {', '.join(dict.fromkeys(w.todo))} in torch." if w.todo else ""
    init = "".join(f"\n        {ln}" for ln in w.init_lines)
    body = "\n".join(f"        {ln}" for ln in w.body)
    src = f'''"""{entry_id}: the minimal torch reproducer, written by `kb new --from {path.name}` from the reduced
ONNX graph ({ops}).{todo} cases() yields the models to export; each states dynamo=."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case


class Net(nn.Module):
    def __init__(self):
        super().__init__(){init}

    def forward(self, {", ".join(args)}):
{body}
        return {", ".join(outs)}{"," if len(outs) == 1 else ""}


def cases():
    torch.manual_seed(0)
    net = Net().eval()
    inputs = ({", ".join(made)}{"," if len(made) == 1 else ""})
    yield Case("trigger", net, inputs, {in_names!r}, {out_names!r}, opset={w.opset}, dynamo=False)
    # Add trigger=False for a control model that must not contain the trigger pattern.
'''
    return src, list(dict.fromkeys(w.todo))


SYMPTOM = {"crash": "crash", "mismatch": "wrong-output", "nan": "nan-output", "shape": "wrong-output"}


def front_matter(page: str, report: dict) -> str:
    """The scaffolded page with kb reduce's observed signature (kind, pattern, example, step) and the culprit's
    op as the trigger's first node."""
    sig = report.get("observed") or {}
    if not sig:
        return page
    kind = sig["kind"]
    lines = ["  - id: todo-message", f"    kind: {kind}"]
    if sig.get("pattern"):
        lines.append(f"    pattern: {_yaml(sig['pattern'])}")
    lines.append(f"    example: {_yaml(sig['example'])}  # observed by kb reduce on {report['engine']['name']} "
                 f"{report['engine'].get('version') or ''}".rstrip())
    lines.append('    summary: "TODO: what the line means"')
    if sig.get("step"):
        lines.append(f"    step: {sig['step']}")
    page = re.sub(r"  - id: todo-message\n(?:    .*\n)+?    step: .*\n", "\n".join(lines) + "\n", page, count=1)
    symptom = SYMPTOM.get(kind) or ("conversion-error" if sig.get("step") in ("mnnconvert", "onnx2ncnn", "pnnx")
                                    else "runtime-error")
    page = re.sub(r"^symptom: \S+", f"symptom: {symptom}", page, count=1, flags=re.MULTILINE)
    culprit = ((report.get("located") or {}).get("culprit") or {}).get("node") or {}
    if culprit.get("op"):
        page = page.replace("first: {op: TODO}", f"first: {{op: {culprit['op']}}}", 1)
    return page


def _yaml(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def scaffold_from(folder: Path, model: str) -> list[str]:
    """Rewrite a freshly scaffolded entry's repro.py (and its signature) from `model`; the ops left as TODO."""
    from kb.entries import PAGE, REPRO

    path = Path(model)
    if not path.is_file():
        raise KBError(model, "no such file", codes.MISSING)
    page = (folder / PAGE).read_text(encoding="utf-8")
    entry_id = re.search(r"^id: (KB\d+)", page, re.MULTILINE)[1]
    src, todo = repro_source(path, entry_id, folder.name)
    (folder / REPRO).write_text(src, encoding="utf-8")
    report = Path(f"{path.with_suffix('')}.json")
    if report.is_file():
        try:
            page = front_matter(page, json.loads(report.read_text()))
        except (ValueError, KeyError, TypeError):
            pass
        (folder / PAGE).write_text(page, encoding="utf-8")
    return todo
