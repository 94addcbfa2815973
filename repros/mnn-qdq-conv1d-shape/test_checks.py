from kb.harness import Checks

checks = Checks(__file__)
SIGS = ["wrong-output"]
VARIANTS = ["two-conv1d", "conv1d-k1", "conv1d-stride2", "conv1d-batch2", "conv1d-after-relu", "conv1d-per-channel",
            "conv1d-opset17", "conv1d-dynamo", "conv1d-onnxsim", "conv1d-float-near-miss", "conv2d-qdq",
            "conv2d-qdq-after-relu"]


def mnn_vs_onnxruntime(s, case):
    """Convert the (QDQ) model with MNN; compare MNN with onnxruntime on the same model."""
    model = s.artifacts.onnx(case)
    return s.against(s.mnn.run(s.mnn.convert(case), case), s.onnxruntime.run(model, case))


@checks.bug("mnn", SIGS, needs=["onnxruntime"], atol=0.05, rtol=0.01)
def qdq_conv1d(s):
    """quantize_static (QDQ, per-tensor) of one Conv1d(4, 8, 3)."""
    return mnn_vs_onnxruntime(s, "conv1d")


@checks.variants("mnn", SIGS, VARIANTS, needs=["onnxruntime"], atol=0.05, rtol=0.01)
def variant(s, case):
    """Convert with mnnconvert; compare MNN with onnxruntime on the same model."""
    return mnn_vs_onnxruntime(s, case)


@checks.workaround("mnn", "mnn-weight-quant", atol=0.05)
def mnn_weight_quant_bits(s):
    """Convert the float model with --weightQuantBits 8 and compare with torch."""
    return s.mnn.run(s.mnn.convert("conv1d-float", "--weightQuantBits", "8", tag="w8"))
