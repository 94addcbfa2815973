from kb.checks import Checks

checks = Checks(__file__)
UNSUPPORTED = ["op-not-supported"]
# MNN and onnxruntime running the same int8 model may round a value one quantization step apart (1/255
# of the range, 0.4%): 1% allows two steps. Measured where MNN runs it: 1.7e-7 of the range; QDQ MLP: 68%.
SAME_MODEL = 0.01
VARIANTS = ["v-dynamic-cnn-opset17", "v-dynamic-cnn-dynamo", "v-dynamic-conv-only", "v-qop-cnn-per-channel",
            "v-qop-cnn-opset17", "v-qop-cnn-dynamo", "v-qop-gemm-head", "v-qop-mlp", "v-qop-matmul-no-bias",
            "v-qop-yoloish", "v-dynamic-mlp", "v-dynamic-mlp-gemm", "v-qdq-cnn", "v-qdq-mlp", "v-float-cnn"]


def against_onnxruntime(s, case, *flags, tag=""):
    """Convert the (quantized) export with mnnconvert, run it, and compare with onnxruntime on the same model."""
    model = s.artifacts.onnx(case)
    return s.against(s.mnn.run(s.mnn.convert(model, *flags, tag=tag), case), s.onnxruntime.run(model, case))


@checks.bug("mnn", UNSUPPORTED, needs=["onnxruntime"], range_tol=SAME_MODEL)
def dynamic_default(s):
    """quantize_dynamic of a conv net (ConvInteger): mnnconvert lists it as unsupported and writes no model."""
    return against_onnxruntime(s, "cnn-dynamic")


@checks.bug("mnn", UNSUPPORTED, needs=["onnxruntime"], range_tol=SAME_MODEL)
def qoperator_default(s):
    """quantize_static with QuantFormat.QOperator (QLinearConv, QLinearAdd, QLinearGlobalAveragePool, QGemm)."""
    return against_onnxruntime(s, "cnn-qoperator")


@checks.bug("mnn", ["broadcast-error", "compute-shape-error"], needs=["onnxruntime"], range_tol=SAME_MODEL)
def dynamic_allow_custom_op(s):
    """--allowCustomOp keeps ConvInteger as an unknown op: it converts, but the module cannot be resized."""
    return against_onnxruntime(s, "cnn-dynamic", "--allowCustomOp", tag="custom")


@checks.bug("mnn", ["create-execution-error"], needs=["onnxruntime"], range_tol=SAME_MODEL)
def qoperator_allow_custom_op(s):
    """--allowCustomOp keeps the QLinear ops as unknown ops: it converts, but no backend can run them."""
    return against_onnxruntime(s, "cnn-qoperator", "--allowCustomOp", tag="custom")


@checks.variants("mnn", UNSUPPORTED, VARIANTS, needs=["onnxruntime"], range_tol=SAME_MODEL)
def variant(s, case):
    """Quantized at export (see repro.py), converted by mnnconvert, compared with onnxruntime on the same model."""
    return against_onnxruntime(s, case)


# int8 weights, float features: measured max abs diff 9.6e-4 on every release (outputs up to 0.42).
@checks.workaround("mnn", "mnn-weight-quant", atol=0.002)
def mnn_weight_quant(s):
    """Convert the float model with --weightQuantBits 8 (int8 weights, float features); compare with torch."""
    return s.mnn.run(s.mnn.convert("cnn-float", "--weightQuantBits", "8", tag="w8"))


# int8 weights and features (KL): measured 2.46% of the output range at most (3.4.0 to 3.6.1).
@checks.workaround("mnn", "mnnquant", range_tol=0.05)
def mnnquant_kl(s):
    """Convert the float model, then mnnquant (int8 weights and features, KL calibration); compare with torch."""
    model = s.mnn.convert("cnn-float")
    return s.mnn.run(s.mnn.quantize(model, s.mnn.sequence_calibration("cnn-float", "KL"), name="cnn-float.KL.mnn"))

