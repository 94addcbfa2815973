from convkb.checks import Checks

checks = Checks(__file__)
SIGS = ["overflow-nan", "overflow-wrong"]
# qemu-user's CPU models: cortex-a76 is ARMv8.2 with fp16 arithmetic (asimdhp), cortex-a72 is ARMv8.0 without it.
# Where `kb tools build arm64` was not run, s.ncnn.run(..., cpu=...) raises Unavailable and the check is skipped.
A76, A72 = "cortex-a76", "cortex-a72"
FP16_OFF = {"use_fp16_storage": False, "use_fp16_packed": False, "use_fp16_arithmetic": False}
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


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def l2_norm_a76(s):
    """sqrt(sum(x * x)) over 64 features of about 100, traced, pnnx defaults, ncnn on a Cortex-A76 (defaults)."""
    return via_pnnx(s, "l2-norm", A76)


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def softmax_logits_a76(s):
    """softmax over logits of about 1e5 (Linear(16, 16), then a logit scale of 1e5), on a Cortex-A76."""
    return via_pnnx(s, "softmax-logits", A76)


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def attention_scores_a76(s):
    """softmax(x @ x^T / 8) of 64 features of about 40 (the product reaches 1.25e5), on a Cortex-A76."""
    return via_pnnx(s, "attention-scores", A76)


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def rmsnorm_a76(s):
    """LLaMA-style RMSNorm of 64 features of about 100, on a Cortex-A76."""
    return via_pnnx(s, "rmsnorm", A76)


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def vit_block_a76(s):
    """A pre-norm ViT block whose residual stream carries one channel of 1e5, on a Cortex-A76."""
    return via_pnnx(s, "vit-block-massive", A76)


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def arithmetic_off_only(s):
    """The L2 norm on a Cortex-A76 with only use_fp16_arithmetic off: the blobs are still stored as fp16."""
    return via_pnnx(s, "l2-norm", A76, {"use_fp16_arithmetic": False})


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def bf16_with_fp16_on(s):
    """The L2 norm on qemu's `max` CPU (fp16 arithmetic and bf16) with use_bf16_storage on and the fp16 defaults
    left on: fp16 is still chosen."""
    return via_pnnx(s, "l2-norm", "max", {"use_bf16_storage": True})


@checks.control("ncnn", needs=["pnnx"])
def l2_norm_a72(s):
    """The same .param/.bin on a Cortex-A72 (ARMv8.0: no fp16 arithmetic), ncnn's defaults."""
    return via_pnnx(s, "l2-norm", A72)


@checks.control("ncnn", needs=["pnnx"])
def softmax_logits_a72(s):
    """The softmax model on a Cortex-A72, defaults."""
    return via_pnnx(s, "softmax-logits", A72)


@checks.control("ncnn", needs=["pnnx"])
def l2_norm_x86(s):
    """The same .param/.bin on ncnn's x86 CPU path (no cpu=), defaults: runs where there is no arm64 emulation."""
    return via_pnnx(s, "l2-norm", None)


@checks.control("ncnn", needs=["pnnx"])
def softmax_logits_x86(s):
    """The softmax model on x86, defaults."""
    return via_pnnx(s, "softmax-logits", None)


@checks.control("ncnn", needs=["pnnx"])
def attention_scores_a72(s):
    """The attention-scores model on a Cortex-A72, defaults."""
    return via_pnnx(s, "attention-scores", A72)


@checks.control("ncnn", needs=["pnnx"])
def vit_block_a72(s):
    """The ViT block with a channel of 1e5 on a Cortex-A72, defaults."""
    return via_pnnx(s, "vit-block-massive", A72)


@checks.control("ncnn", needs=["pnnx"])
def vit_block_x86(s):
    """The ViT block with a channel of 1e5 on x86, defaults."""
    return via_pnnx(s, "vit-block-massive", None)


@checks.control("ncnn", needs=["pnnx"], **FP16)
def l2_norm_small_a76(s):
    """The L2 norm of features of about 10 (every intermediate under 65504) on a Cortex-A76, defaults."""
    return via_pnnx(s, "l2-norm-small", A76)


@checks.workaround("ncnn", "fp16-off", needs=["pnnx"])
def fp16_off(s):
    """The L2 norm on a Cortex-A76 with use_fp16_storage, use_fp16_packed and use_fp16_arithmetic off."""
    return via_pnnx(s, "l2-norm", A76, FP16_OFF)


@checks.workaround("ncnn", "fp16-off", needs=["pnnx"])
def fp16_off_softmax(s):
    """The softmax model on a Cortex-A76 with the fp16 options off."""
    return via_pnnx(s, "softmax-logits", A76, FP16_OFF)


@checks.workaround("ncnn", "fp16-off", needs=["pnnx"])
def storage_off_only(s):
    """The L2 norm on a Cortex-A76 with only use_fp16_storage off (packed and arithmetic left on)."""
    return via_pnnx(s, "l2-norm", A76, {"use_fp16_storage": False})


@checks.workaround("ncnn", "fp16-off", needs=["pnnx"])
def storage_off_vit(s):
    """The ViT block with a channel of 1e5 on a Cortex-A76 with only use_fp16_storage off."""
    return via_pnnx(s, "vit-block-massive", A76, {"use_fp16_storage": False})


# bf16 keeps fp32's exponent range but only 8 significant bits (0.4% per rounding): measured 0.19% to 0.88%
# relative on the L2 norm, inside FP16's 1%.
@checks.workaround("ncnn", "bf16", needs=["pnnx"], **FP16)
def bf16_a76(s):
    """The L2 norm on a Cortex-A76 with the fp16 options off and use_bf16_storage on."""
    return via_pnnx(s, "l2-norm", A76, {**FP16_OFF, "use_bf16_storage": True})


@checks.workaround("ncnn", "rescale", needs=["pnnx"], **FP16)
def rescale(s):
    """The features divided by 256 before squaring and the length multiplied by 256 after; Cortex-A76 defaults."""
    return via_pnnx(s, "l2-norm-rescaled", A76)


@checks.variants("ncnn", SIGS, PNNX_VARIANTS, needs=["pnnx"], **FP16)
def arm(s, case):
    """pnnx (from TorchScript, or from ONNX for the -opset/-dynamo/-onnxsim names), ncnn on a Cortex-A76, defaults."""
    return via_pnnx(s, case, A76, source="onnx" if case.endswith(FROM_ONNX) else "torchscript")


@checks.variants("onnx2ncnn", SIGS, ONNX2NCNN_VARIANTS, needs=["ncnn"], **FP16)
def onnx2ncnn_arm(s, case):
    """onnx2ncnn from the opset 11 export, ncnn on a Cortex-A76, defaults."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], cpu=A76)
