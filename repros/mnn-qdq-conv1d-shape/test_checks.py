from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["wrong-shape", "wrong-output"]
# MNN and onnxruntime run the same int8 model; their rounding may differ by a step of the output's
# quantization (range 3.7 / 255 = 0.015): 0.05 allows three. The bug is off by 1.18, or by shape.
SAME_MODEL = dict(atol=0.05)
VARIANTS = ["two-conv1d", "conv1d-k1", "conv1d-stride2", "conv1d-batch2", "conv1d-after-relu", "conv1d-per-channel",
            "conv1d-opset17", "conv1d-dynamo", "conv1d-onnxsim", "conv1d-float-near-miss", "conv2d-qdq",
            "conv2d-qdq-after-relu"]


def mnn_vs_onnxruntime(s, case):
    """Convert the (QDQ) model with MNN; compare MNN with onnxruntime on the same model."""
    model = s.artifacts.onnx(case)
    return s.against(s.mnn.run(s.mnn.convert(case), case), s.onnxruntime.run(model, case))


@checks.bug("mnn", SIGS, needs=["onnxruntime"], **SAME_MODEL)
def qdq_conv1d(s):
    """quantize_static (QDQ, per-tensor) of one Conv1d(4, 8, 3)."""
    return mnn_vs_onnxruntime(s, "conv1d")


@checks.variants("mnn", SIGS, VARIANTS, needs=["onnxruntime"], **SAME_MODEL)
def variant(s, case):
    """Convert with mnnconvert; compare MNN with onnxruntime on the same model."""
    return mnn_vs_onnxruntime(s, case)


# int8 weights, float features: measured max abs diff 0.0072 (outputs up to 1.9); 0.015 is twice that.
@checks.workaround("mnn", "mnn-weight-quant", atol=0.015)
def mnn_weight_quant_bits(s):
    """Convert the float model with --weightQuantBits 8 and compare with torch."""
    return s.mnn.run(s.mnn.convert("conv1d-float", "--weightQuantBits", "8", tag="w8"))
