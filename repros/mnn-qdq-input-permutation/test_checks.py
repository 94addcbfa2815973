from kb.checks import Checks

checks = Checks(__file__)


def quantized_in_mnn(s, method, fmt, case="float-conv", **options):
    """Quantize with onnxruntime, convert with MNN, and compare MNN with onnxruntime on that model."""
    q = s.onnxruntime.quantize(case, method, fmt, **options)
    if fmt == "QDQ":
        s.require_trigger(q)
    return s.against(s.mnn.run(s.mnn.convert(q), case), s.onnxruntime.run(q, case))


@checks.bug("mnn", ["conv-shape-error", "input-channel", "compute-shape-error"], needs=["onnxruntime"], atol=0.1)
def qdq_static(s):
    """quantize_static, QuantFormat.QDQ, per-tensor (onnxruntime's defaults)."""
    return quantized_in_mnn(s, "static", "QDQ")


@checks.bug("mnn", ["conv-shape-error", "input-channel", "compute-shape-error"], needs=["onnxruntime"], atol=0.1)
def qdq_static_per_channel(s):
    """quantize_static, QuantFormat.QDQ, per_channel=True."""
    return quantized_in_mnn(s, "static", "QDQ", per_channel=True)


@checks.bug("mnn", ["conv-shape-error", "silent-wrong-output"], needs=["onnxruntime"], atol=0.1)
def qdq_batch_equals_channels(s):
    """Input (3, 3, H, W): the swapped shape is valid, so MNN runs without an error."""
    return quantized_in_mnn(s, "static", "QDQ", case="float-conv-batch3")


@checks.bug("mnn", ["conv-shape-error", "input-channel", "compute-shape-error"], needs=["onnxruntime"], atol=0.1)
def qoperator_static(s):
    """For the record: the QOperator format (QLinearConv) instead of QDQ."""
    return quantized_in_mnn(s, "static", "QOperator")


@checks.bug("mnn", ["conv-shape-error", "input-channel", "compute-shape-error"], needs=["onnxruntime"], atol=0.1)
def dynamic_quantized(s):
    """For the record: quantize_dynamic (ConvInteger) instead of static quantization."""
    return quantized_in_mnn(s, "dynamic", "QOperator")


@checks.variants("mnn", ["conv-shape-error", "input-channel", "compute-shape-error", "silent-wrong-output"],
                 ["v-qdq", "v-qdq-per-channel", "v-qdq-opset17", "v-qdq-two-convs", "v-qdq-pool-first", "v-qdq-batch2",
                  "v-qoperator", "v-dynamic", "v-qdq-mlp", "v-float"], needs=["onnxruntime"], atol=0.1)
def variant(s, case):
    """Quantized at export (see repro.py), converted by MNN, compared with onnxruntime on the same model."""
    model = s.artifacts.onnx(case)
    return s.against(s.mnn.run(s.mnn.convert(model), case), s.onnxruntime.run(model, case))


@checks.workaround("mnn", "mnn-weight-quant", atol=0.05)
def mnn_weight_quant_bits(s):
    """Convert the float model with MNN's own --weightQuantBits 8 and compare with torch."""
    return s.mnn.run(s.mnn.convert("float-conv", "--weightQuantBits", "8", tag="w8"))

