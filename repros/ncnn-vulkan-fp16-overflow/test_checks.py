from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["overflow-nan", "overflow-wrong"]
# The Vulkan device: where there is none (CI, most machines) s.ncnn.run raises Unavailable and the check is skipped.
VULKAN = {"use_vulkan_compute": True}
# On the Vulkan device every activation is rounded to fp16 (11 significant bits): the in-range models differ from
# torch by up to 0.052 on lengths of about 90 (rel 6e-4) and 6e-3 on softmax probabilities. These tolerances pass
# that rounding and fail an inf, a NaN or a result off by more than 1%.
FP16 = {"atol": 1e-2, "rtol": 1e-2}
FROM_ONNX = ("-opset13", "-opset17", "-dynamo", "-onnxsim")
PNNX_VARIANTS = ["l2-norm", "linalg-norm", "rmsnorm", "rmsnorm-opset17", "softmax-logits", "softmax-logits-dynamo",
                 "softmax-logits-onnxsim", "attention-scores", "attention-scores-dynamo", "vit-block-massive",
                 "vit-block-massive-opset17", "l2-norm-small", "rmsnorm-small", "softmax-small-logits",
                 "attention-scores-small", "vit-block-in-range"]
ONNX2NCNN_VARIANTS = ["l2-norm-onnx2ncnn", "softmax-logits-onnx2ncnn", "attention-scores-onnx2ncnn",
                      "l2-norm-small-onnx2ncnn"]


def via_pnnx(s, case, options, source="torchscript"):
    model = s.artifacts.torchscript(case) if source == "torchscript" else s.artifacts.onnx(case)
    param, bin = s.pnnx.convert(model, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], options=options)


@checks.variants("ncnn", SIGS, PNNX_VARIANTS, needs=["pnnx"], **FP16)
def vulkan(s, case):
    """pnnx (from TorchScript, or from ONNX for the -opset/-dynamo/-onnxsim names), ncnn on Vulkan, defaults."""
    return via_pnnx(s, case, VULKAN, "onnx" if case.endswith(FROM_ONNX) else "torchscript")


@checks.variants("onnx2ncnn", SIGS, ONNX2NCNN_VARIANTS, needs=["ncnn"], **FP16)
def onnx2ncnn_vulkan(s, case):
    """onnx2ncnn from the opset 11 export, ncnn on Vulkan, defaults."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], options=VULKAN)
