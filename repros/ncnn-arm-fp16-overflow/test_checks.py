from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["overflow-nan", "overflow-wrong"]
# qemu-user's CPU models: cortex-a76 is ARMv8.2 with fp16 arithmetic (asimdhp), cortex-a72 is ARMv8.0 without it.
# Where `kb tools build arm64` was not run, s.ncnn.run(..., cpu=...) raises Unavailable and the check is skipped.
A76, A72 = "cortex-a76", "cortex-a72"
# With fp16 arithmetic every activation is rounded to fp16 (11 significant bits): the in-range models differ from
# torch by up to about 1e-3 relative. These tolerances pass that rounding and fail an inf, a NaN or a result off by
# more than 1%.
FP16 = {"atol": 1e-2, "rtol": 1e-2}
FROM_ONNX = ("-opset13", "-opset17", "-dynamo", "-onnxsim")
PNNX_VARIANTS = ["l2-norm", "linalg-norm", "rmsnorm", "rmsnorm-opset17", "softmax-logits", "softmax-logits-dynamo",
                 "softmax-logits-onnxsim", "attention-scores", "attention-scores-dynamo", "vit-block-massive",
                 "vit-block-massive-opset17", "l2-norm-small", "rmsnorm-small", "softmax-small-logits",
                 "attention-scores-small", "vit-block-in-range"]
ONNX2NCNN_VARIANTS = ["l2-norm-onnx2ncnn", "softmax-logits-onnx2ncnn", "attention-scores-onnx2ncnn",
                      "l2-norm-small-onnx2ncnn"]


def via_pnnx(s, case, cpu, options=None, source="torchscript"):
    model = s.artifacts.torchscript(case) if source == "torchscript" else s.artifacts.onnx(case)
    param, bin = s.pnnx.convert(model, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], options=options, cpu=cpu)


# bf16 keeps fp32's exponent range but only 8 significant bits (0.4% per rounding): measured 0.19% to 0.88%
# relative on the L2 norm, inside FP16's 1%.


@checks.variants("ncnn", SIGS, PNNX_VARIANTS, needs=["pnnx"], **FP16)
def arm(s, case):
    """pnnx (from TorchScript, or from ONNX for the -opset/-dynamo/-onnxsim names), ncnn on a Cortex-A76, defaults."""
    return via_pnnx(s, case, A76, source="onnx" if case.endswith(FROM_ONNX) else "torchscript")


@checks.variants("onnx2ncnn", SIGS, ONNX2NCNN_VARIANTS, needs=["ncnn"], **FP16)
def onnx2ncnn_arm(s, case):
    """onnx2ncnn from the opset 11 export, ncnn on a Cortex-A76, defaults."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], cpu=A76)
