import shutil

from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["op-not-registered"]
# pnnx stores weights as fp16 by default: two Linear layers differ from torch by up to ~1e-3.
FP16 = dict(atol=2e-3)
VARIANTS = ["sdpa-bool-opset17", "sdpa-bool-onnxsim", "sdpa-bool-external-data", "bert-extended-opset17", "bert-extended-opset13",
            "masked-fill-bool", "masked-fill-bool-opset17", "logical-and-opset17", "rel-bias-gather-opset13", "rel-bias-gather-dynamo",
            "rel-gather-opset17", "isnan-guard-opset13", "isnan-guard-onnxsim", "float-mask-dynamo", "float-mask-opset13",
            "arithmetic-mask-opset17"]


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0", "in1"], s.artifacts.case(case)["outputs"], batch=True)


def ts(s, case):
    return via_pnnx(s, s.artifacts.torchscript(case), case)


def onnx(s, case):
    """pnnx model.onnx, run where the export wrote it: the dynamo exporter keeps the weights in model.onnx.data
    beside it (pnnx runs in its work folder, so the .data file goes there too, as it sits beside a user's file)."""
    src = s.artifacts.onnx(case)
    data = src.with_name(src.name + ".data")
    if data.exists():
        work = s.path("pnnx-onnx")
        work.mkdir(exist_ok=True)
        shutil.copy(data, work / data.name)
    return via_pnnx(s, src, case)


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def onnx_sdpa_bool(s):
    """F.scaled_dot_product_attention with attn_mask=mask.bool(), default export (dynamo, opset 18): Cast, Where, IsNaN."""
    return onnx(s, "sdpa-bool")


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def torchscript_sdpa_bool(s):
    """The same, traced: pnnx writes SDPA, but keeps the .bool() as Tensor.to."""
    return ts(s, "sdpa-bool")


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def onnx_bert_extended(s):
    """BERT's extended mask, (1.0 - mask.bool().to(x.dtype)) * -10000: two Casts."""
    return onnx(s, "bert-extended")


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def torchscript_bert_extended(s):
    return ts(s, "bert-extended")


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def onnx_logical_and(s):
    """torch.logical_and(padding mask, causal mask): Cast, And."""
    return onnx(s, "logical-and")


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def torchscript_logical_and(s):
    return ts(s, "logical-and")


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def onnx_rel_gather(s):
    """DeBERTa-style c2p: torch.gather(q @ rel_emb.T, -1, rel): GatherElements."""
    return onnx(s, "rel-gather")


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def torchscript_rel_gather(s):
    return ts(s, "rel-gather")


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def onnx_isnan_guard(s):
    """torch.where(torch.isnan(a), 0, a) after the softmax: IsNaN, Where."""
    return onnx(s, "isnan-guard")


@checks.bug("pnnx", SIGS, needs=["ncnn"], **FP16)
def torchscript_isnan_guard(s):
    return ts(s, "isnan-guard")


@checks.control("pnnx", needs=["ncnn"], **FP16)
def onnx_float_mask(s):
    return onnx(s, "float-mask")


@checks.control("pnnx", needs=["ncnn"], **FP16)
def torchscript_float_mask(s):
    return ts(s, "float-mask")


@checks.control("pnnx", needs=["ncnn"], **FP16)
def onnx_rel_bias_gather(s):
    """A relative position bias, bias_table[rel] with a constant table and index (opset 17, dynamo=False): Gather."""
    return onnx(s, "rel-bias-gather")


@checks.control("pnnx", needs=["ncnn"], **FP16)
def torchscript_rel_bias_gather(s):
    return ts(s, "rel-bias-gather")


# ---- workarounds: the same weights and inputs, judged against the original model's torch output ----------------

@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def onnx_sdpa_bool_arithmetic(s):
    return onnx(s, "sdpa-bool-arithmetic")


@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def torchscript_sdpa_bool_arithmetic(s):
    return ts(s, "sdpa-bool-arithmetic")


@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def onnx_bert_extended_arithmetic(s):
    return onnx(s, "bert-extended-arithmetic")


@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def torchscript_bert_extended_arithmetic(s):
    return ts(s, "bert-extended-arithmetic")


@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def onnx_logical_and_arithmetic(s):
    return onnx(s, "logical-and-arithmetic")


@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def torchscript_logical_and_arithmetic(s):
    return ts(s, "logical-and-arithmetic")


@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def onnx_rel_gather_arithmetic(s):
    return onnx(s, "rel-gather-arithmetic")


@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def torchscript_rel_gather_arithmetic(s):
    return ts(s, "rel-gather-arithmetic")


@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def onnx_isnan_guard_dropped(s):
    return onnx(s, "isnan-guard-dropped")


@checks.workaround("pnnx", "arithmetic-mask", needs=["ncnn"], **FP16)
def torchscript_isnan_guard_dropped(s):
    return ts(s, "isnan-guard-dropped")


@checks.variants("pnnx", SIGS, VARIANTS, needs=["ncnn"], **FP16)
def variant(s, case):
    """pnnx from the ONNX export, run by ncnn; compared with torch."""
    return onnx(s, case)

