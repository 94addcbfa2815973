from kb.checks import Checks

checks = Checks(__file__)

# MNN against onnxruntime on the same int8 QDQ model: 0.05 is five output quantization steps (the output
# scale is about 0.01 here); the failures measured so far are errors or a swapped shape, which no tolerance hides.
INT8_ATOL = 0.05


def quantized_in_mnn(s, method, fmt, case="float-conv", **options):
    """Quantize with onnxruntime, convert with MNN, and compare MNN with onnxruntime on that model."""
    q = s.onnxruntime.quantize(case, method, fmt, **options)
    if fmt == "QDQ":
        s.require_trigger(q)
    return s.against(s.mnn.run(s.mnn.convert(q), case), s.onnxruntime.run(q, case))


@checks.bug("mnn", ["conv-shape-error", "input-channel", "compute-shape-error"], needs=["onnxruntime"],
            atol=INT8_ATOL)
def qdq_static(s):
    """quantize_static, QuantFormat.QDQ, per-tensor (onnxruntime's defaults)."""
    return quantized_in_mnn(s, "static", "QDQ")


@checks.bug("mnn", ["conv-shape-error", "input-channel", "compute-shape-error"], needs=["onnxruntime"],
            atol=INT8_ATOL)
def qdq_static_per_channel(s):
    """quantize_static, QuantFormat.QDQ, per_channel=True."""
    return quantized_in_mnn(s, "static", "QDQ", per_channel=True)


@checks.bug("mnn", ["conv-shape-error", "swapped-output-shape"], needs=["onnxruntime"], atol=INT8_ATOL)
def qdq_batch_equals_channels(s):
    """Input (3, 3, H, W): the swapped shape is valid, so MNN runs without an error."""
    return quantized_in_mnn(s, "static", "QDQ", case="float-conv-batch3")


@checks.bug("mnn", ["conv-shape-error", "input-channel", "compute-shape-error"], needs=["onnxruntime"],
            atol=INT8_ATOL)
def qoperator_static(s):
    """For the record: the QOperator format (QLinearConv) instead of QDQ."""
    return quantized_in_mnn(s, "static", "QOperator")


@checks.bug("mnn", ["conv-shape-error", "input-channel", "compute-shape-error"], needs=["onnxruntime"],
            atol=INT8_ATOL)
def dynamic_quantized(s):
    """For the record: quantize_dynamic (ConvInteger) instead of static quantization."""
    return quantized_in_mnn(s, "dynamic", "QOperator")


@checks.variants("mnn", ["conv-shape-error", "input-channel", "compute-shape-error", "swapped-output-shape"],
                 ["v-qdq", "v-qdq-per-channel", "v-qdq-opset17", "v-qdq-two-convs", "v-qdq-pool-first", "v-qdq-batch2",
                  "v-qoperator", "v-dynamic", "v-qdq-mlp", "v-float"], needs=["onnxruntime"], atol=INT8_ATOL)
def variant(s, case):
    """Quantized at export (see repro.py), converted by MNN, compared with onnxruntime on the same model."""
    model = s.artifacts.onnx(case)
    return s.against(s.mnn.run(s.mnn.convert(model), case), s.onnxruntime.run(model, case))


# int8 weights against the float model's torch output: measured 0.0088 on MNN 3.0.0 to 3.6.1.
@checks.workaround("mnn", "mnn-weight-quant", atol=0.02)
def mnn_weight_quant_bits(s):
    """Convert the float model with MNN's own --weightQuantBits 8 and compare with torch."""
    return s.mnn.run(s.mnn.convert("float-conv-w8", "--weightQuantBits", "8", tag="w8"))
