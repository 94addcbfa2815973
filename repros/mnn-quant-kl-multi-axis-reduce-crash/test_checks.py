from pathlib import Path

from kb.checks import Checks

checks = Checks(__file__)
# int8 against the float model's torch output, as a fraction of its largest magnitude: the largest measured
# on any version that did not crash or give NaN is 2.75% (variant-layernorm2d-dyn18, MNN 3.4.0 to 3.6.1).
RANGE_TOL = 0.05


def quantized(s, case, method="KL", model=None):
    """mnnconvert (float), then mnnquant with calibration data in the "sequence" layout, then run."""
    model = model or s.mnn.convert(case)
    config = s.mnn.sequence_calibration(case, method)
    return s.mnn.run(s.mnn.quantize(model, config, name=f"{model.stem}.{method}.mnn"))


@checks.workaround("mnn", "reduce-one-axis-at-a-time", range_tol=RANGE_TOL)
def kl_split_onnx(s):
    """The dynamo export itself, with each multi-axis Reduce rewritten into single-axis ones (split_reduce_axes)."""
    src = s.mnn.convert(split_reduce_axes(s.artifacts.onnx("pool-dyn18"), s.path("pool-dyn18.split.onnx")))
    return quantized(s, "pool-dyn18", model=src)


def split_reduce_axes(src: Path, dst: Path) -> Path:
    """Rewrite every ReduceMean/Sum/Max/Min over several axes into a chain of single-axis ones, last axis
    first (so the remaining axis numbers stay valid with keepdims=0). Exact for these four ops. The same
    code is on the entry's page."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.shape_inference.infer_shapes(onnx.load(str(src)))
    g = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    rank = {v.name: len(v.type.tensor_type.shape.dim) for v in [*g.value_info, *g.input, *g.output]}
    const = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    const.update({n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in g.node if n.op_type == "Constant"})
    nodes = []
    for n in g.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        axes = attrs.get("axes")
        if axes is None and len(n.input) > 1 and n.input[1]:
            axes = const[n.input[1]].tolist()
        if n.op_type not in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin") or n.input[0] not in rank:
            nodes.append(n)
            continue
        r = rank[n.input[0]]
        axes = sorted({a % r for a in (range(r) if axes is None else axes)}, reverse=True)
        if len(axes) < 2:
            nodes.append(n)
            continue
        keep = attrs.get("keepdims", 1)
        axes_input = n.op_type == "ReduceSum" and opset >= 13 or opset >= 18
        x = n.input[0]
        for i, a in enumerate(axes):
            out = n.output[0] if i == len(axes) - 1 else f"{n.output[0]}/split{i}"
            if axes_input:
                g.initializer.append(numpy_helper.from_array(np.array([a], np.int64), f"{n.output[0]}/axes{i}"))
                nodes.append(helper.make_node(n.op_type, [x, f"{n.output[0]}/axes{i}"], [out], keepdims=keep))
            else:
                nodes.append(helper.make_node(n.op_type, [x], [out], axes=[a], keepdims=keep))
            x = out
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(dst))
    return dst
