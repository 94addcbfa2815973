from pathlib import Path

from kb.checks import Checks

checks = Checks(__file__)
BUG = ["kl-segfault"]
# int8 against the float model's torch output, as a fraction of its largest magnitude: the largest measured
# on any version that did not crash or give NaN is 2.75% (variant-layernorm2d-dyn18, MNN 3.4.0 to 3.6.1).
RANGE_TOL = 0.05
VARIANTS = [
    # global pooling heads, exported both ways
    "adaptive-dyn18", "adaptive-dyn18-sim", "adaptive-ts13", "adaptive-ts17", "mean-ts13", "mean-ts18", "mean-ts13-sim",
    # other Reduce ops over H and W, a Reduce over all axes, and a Reduce over the channel axis only
    "amax-ts13", "sum-ts13", "amin-ts13", "l2-ts13", "logsumexp-ts13", "global-scale-ts13", "channel-gate-ts13",
    # squeeze-and-excitation
    "se-dyn18", "se-ts13",
    # ConvNeXt: the head (mean over H, W), the channels-first LayerNorm, and its channels-last rewrite
    "convnext-ts17", "convnext-dyn18", "convnext-backbone-ts13", "convnext-backbone-dyn18", "convnext-backbone-ts13-sim",
    "cln1d-ts13", "cln1d-weight-first-ts13", "layernorm2d-ts13", "layernorm2d-dyn18",
    # the workaround's shape: one axis at a time
    "chained-dyn18",
]


def quantized(s, case, method="KL", model=None):
    """mnnconvert (float), then mnnquant with calibration data in the "sequence" layout, then run."""
    model = model or s.mnn.convert(case)
    config = s.mnn.sequence_calibration(case, method)
    return s.mnn.run(s.mnn.quantize(model, config, name=f"{model.stem}.{method}.mnn"))


@checks.bug("mnn", BUG, range_tol=RANGE_TOL)
def kl(s):
    """mnnquant KL on a classifier whose global average pooling dynamo wrote as ReduceMean over [-1, -2]."""
    return quantized(s, "pool-dyn18")


@checks.bug("mnn", BUG, range_tol=RANGE_TOL)
def kl_channels_first_layernorm(s):
    """mnnquant KL on a ConvNeXt stage whose channels-first LayerNorm MNN fuses into a LayerNorm over axis 1."""
    return quantized(s, "backbone-ts13")


@checks.variants("mnn", BUG, VARIANTS, range_tol=RANGE_TOL)
def kl_variant(s, case):
    """mnnquant KL on the float .mnn of the variant."""
    return quantized(s, case)


@checks.workaround("mnn", "ema-calibration", range_tol=RANGE_TOL)
def ema(s):
    """The same float model, calibrated with "feature_quantize_method": "EMA"."""
    return quantized(s, "pool-dyn18", "EMA")


@checks.workaround("mnn", "export-global-average-pool", range_tol=RANGE_TOL)
def kl_classic_export(s):
    """The same model exported with dynamo=False at opset 17: GlobalAveragePool instead of ReduceMean."""
    return quantized(s, "pool-ts17")


@checks.workaround("mnn", "reduce-one-axis-at-a-time", range_tol=RANGE_TOL)
def kl_chained_mean(s):
    """The pooling written as z.mean(3).mean(2), exported with dynamo=True: two single-axis ReduceMeans."""
    return quantized(s, "pool-chained-dyn18")


@checks.workaround("mnn", "reduce-one-axis-at-a-time", range_tol=RANGE_TOL)
def kl_split_onnx(s):
    """The dynamo export itself, with each multi-axis Reduce rewritten into single-axis ones (split_reduce_axes)."""
    src = s.mnn.convert(split_reduce_axes(s.artifacts.onnx("pool-dyn18"), s.path("pool-dyn18.split.onnx")))
    return quantized(s, "pool-dyn18", model=src)


@checks.workaround("mnn", "avg-pool-kernel", range_tol=RANGE_TOL)
def kl_avg_pool(s):
    """The pooling written as F.avg_pool2d(z, 8) (the feature map's size), exported with dynamo=True: AveragePool."""
    return quantized(s, "pool-avgpool-dyn18")


@checks.workaround("mnn", "channels-last-layernorm", range_tol=RANGE_TOL)
def kl_layernorm2d(s):
    """The channels-first LayerNorm written as permute -> nn.LayerNorm(C) -> permute (timm's LayerNorm2d)."""
    return quantized(s, "backbone-permute-ts13")


@checks.workaround("mnn", "ema-calibration", range_tol=RANGE_TOL)
def ema_channels_first_layernorm(s):
    """The ConvNeXt stage with its channels-first LayerNorm, calibrated with EMA."""
    return quantized(s, "backbone-ts13", "EMA")


@checks.workaround("mnn", "ema-calibration", range_tol=RANGE_TOL)
def ema_cln1d(s):
    """A conv -> channels-first LayerNorm over (N, C, T) -> conv model (variant cln1d-ts13), calibrated with EMA."""
    return quantized(s, "cln1d-ts13", "EMA")


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
