"""Ablations: ONNX rewrites that take one entry's trigger out of a file and keep the function it computes.

A silent failure (NaN or wrong outputs), or a generic message (a protobuf abort, "layer X not exists"),
carries no log line that names its cause. The bench labels it by experiment instead: the pipeline
that failed runs again on the ablated file. When the failure goes away there, it was the entry's;
when it stays the same, it was not. Entries without an ablation keep only their specific log and
crash evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _constant(model: onnx.ModelProto, name: str) -> np.ndarray | None:
    for init in model.graph.initializer:
        if init.name == name:
            return numpy_helper.to_array(init)
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            for a in node.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
    return None


def pow_to_mul(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """Pow(x, 2) -> Mul(x, x), and Pow(x, 3) -> Mul(Mul(x, x), x): the same values without pow."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes, changed = [], False
    for node in out.graph.node:
        e = _constant(out, node.input[1]) if node.op_type == "Pow" and len(node.input) == 2 else None
        if e is None or e.size != 1 or float(e.reshape(-1)[0]) not in (2.0, 3.0):
            nodes.append(node)
            continue
        x, y = node.input[0], node.output[0]
        if float(e.reshape(-1)[0]) == 2.0:
            nodes.append(helper.make_node("Mul", [x, x], [y], name=node.name + "_ablated"))
        else:
            nodes += [helper.make_node("Mul", [x, x], [y + "_sq"], name=node.name + "_ablated_sq"),
                      helper.make_node("Mul", [y + "_sq", x], [y], name=node.name + "_ablated")]
        changed = True
    if not changed:
        return None
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    return out


def _conv1x1(x: str, y: str, n: str, w: np.ndarray, b: np.ndarray | None) -> tuple[list, list]:
    """y = x @ w.T + b on a channels-last 4-D x, as NCHW Transpose -> 1x1 Conv -> Transpose back."""
    kernel = numpy_helper.from_array(np.ascontiguousarray(w[:, :, None, None]).astype(np.float32), n + "_ablated_w")
    bias = numpy_helper.from_array((np.zeros(w.shape[0]) if b is None else b.reshape(-1)).astype(np.float32),
                                   n + "_ablated_b")
    return ([helper.make_node("Transpose", [x], [y + "_nchw"], perm=[0, 3, 1, 2], name=n + "_ablated_in"),
             helper.make_node("Conv", [y + "_nchw", kernel.name, bias.name], [y + "_conv"], name=n + "_ablated",
                              kernel_shape=[1, 1], strides=[1, 1], pads=[0, 0, 0, 0], dilations=[1, 1], group=1),
             helper.make_node("Transpose", [y + "_conv"], [y], perm=[0, 2, 3, 1], name=n + "_ablated_out")],
            [kernel, bias])


def _gemm_forms(model, rank, consumers, producer) -> dict:
    """Reshape(x 4-D -> 2-D) -> Gemm(W const) -> Reshape(back to 4-D): id(node) -> replacement (the last
    Reshape) or None (the first two, dropped)."""
    out = {}
    for gemm in model.graph.node:
        if gemm.op_type != "Gemm" or len(gemm.input) < 2:
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in gemm.attribute}
        w = _constant(model, gemm.input[1])
        b = _constant(model, gemm.input[2]) if len(gemm.input) > 2 else None
        first = producer.get(gemm.input[0])
        after = consumers.get(gemm.output[0], [])
        if (w is None or w.ndim != 2 or attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0
                or (b is not None and attrs.get("beta", 1.0) != 1.0) or first is None or first.op_type != "Reshape"
                or rank.get(first.input[0]) != 4 or len(after) != 1 or after[0].op_type != "Reshape"
                or len(consumers.get(first.output[0], [])) != 1):
            continue
        weight = w if attrs.get("transB", 0) else w.T  # [out, in]
        out[id(first)] = None
        out[id(gemm)] = None
        out[id(after[0])] = _conv1x1(first.input[0], after[0].output[0], gemm.name or gemm.output[0], weight, b)
    return out


def linear_to_conv(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """MatMul(x, W) on a 4-D channels-last x, or onnxsim's Reshape -> Gemm -> Reshape of it -> Transpose to
    NCHW, a 1x1 Conv with W, Transpose back."""
    inferred = onnx.shape_inference.infer_shapes(model)
    rank = {vi.name: len(vi.type.tensor_type.shape.dim)
            for vi in [*inferred.graph.value_info, *inferred.graph.input] if vi.type.tensor_type.HasField("shape")}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes, inits, changed = [], [], False
    consumers: dict[str, list] = {}
    for node in out.graph.node:
        for t in node.input:
            consumers.setdefault(t, []).append(node)
    producer = {t: node for node in out.graph.node for t in node.output}
    folded = _gemm_forms(out, rank, consumers, producer)  # onnxsim's Reshape -> Gemm -> Reshape
    for node in out.graph.node:
        if id(node) in folded:
            if folded[id(node)] is not None:
                nodes += folded[id(node)][0]
                inits += folded[id(node)][1]
                changed = True
            continue
        w = _constant(out, node.input[1]) if node.op_type == "MatMul" else None
        if w is None or w.ndim != 2 or rank.get(node.input[0]) != 4:
            nodes.append(node)
            continue
        new_nodes, new_inits = _conv1x1(node.input[0], node.output[0], node.name or node.output[0], w.T, None)
        nodes += new_nodes
        inits += new_inits
        changed = True
    if not changed:
        return None
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    out.graph.initializer.extend(inits)
    return out


def scalar_second(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """A 0-d constant first operand of Add/Mul/Max/Min moves to the second slot; Pow's gets the shape [1]."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    changed = False
    for node in out.graph.node:
        if node.op_type not in ("Add", "Mul", "Max", "Min", "Pow") or len(node.input) != 2:
            continue
        c = _constant(out, node.input[0])
        if c is None or c.ndim != 0:
            continue
        if node.op_type == "Pow":
            t = numpy_helper.from_array(c.reshape(1), node.input[0] + "_ablated_1d")
            out.graph.initializer.append(t)
            node.input[0] = t.name
        else:
            node.input[0], node.input[1] = node.input[1], node.input[0]
        changed = True
    return out if changed else None


def opset17(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """Opset 18 or later -> 17 with onnx's version converter: the Reduce ops' axes become attributes."""
    version = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if version < 18:
        return None
    from onnx import version_converter

    converted = version_converter.convert_version(model, 17)
    for node in converted.graph.node:  # the converter leaves this opset-18 attribute behind (0: 17's behaviour)
        keep = [a for a in node.attribute if not (a.name == "noop_with_empty_axes" and a.i == 0)]
        if len(keep) != len(node.attribute):
            del node.attribute[:]
            node.attribute.extend(keep)
    onnx.checker.check_model(converted)
    return converted


@dataclass(frozen=True)
class Ablation:
    name: str
    rewrite: Callable[[onnx.ModelProto], onnx.ModelProto | None]  # None: nothing to take out
    pipelines: tuple[str, ...]  # the pipelines whose failures it can attribute


# Entry slug -> its ablation. Optional: an entry without one is labelled by its log and crash evidence.
ABLATIONS = {
    "ncnn-onnx2ncnn-layernorm": Ablation("pow-to-mul", pow_to_mul, ("onnx2ncnn", "pnnx")),
    "ncnn-onnx2ncnn-linear-on-4d": Ablation("linear-to-conv", linear_to_conv, ("onnx2ncnn", "pnnx")),
    "ncnn-onnx2ncnn-scalar-first-operand": Ablation("scalar-second", scalar_second, ("onnx2ncnn",)),
    "pnnx-opset18-reduce-axes": Ablation("opset17", opset17, ("pnnx",)),
    "mnn-reducel2-opset18": Ablation("opset17", opset17, ("mnn", "mnn-session")),
}
