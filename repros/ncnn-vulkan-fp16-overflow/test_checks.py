from convkb.checks import Checks

checks = Checks(__file__)
SIGS = ["overflow-nan", "overflow-wrong"]
# The Vulkan device: where there is none (CI, most machines) s.ncnn.run raises Unavailable and the check is skipped.
VULKAN = {"use_vulkan_compute": True}
CPU = {"use_vulkan_compute": False}
FP16_OFF = {"use_vulkan_compute": True, "use_fp16_storage": False, "use_fp16_packed": False,
            "use_fp16_arithmetic": False}
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


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def l2_norm_vulkan(s):
    """sqrt(sum(x * x)) over 64 features of about 100, traced, pnnx defaults, ncnn on the Vulkan device (defaults)."""
    return via_pnnx(s, "l2-norm", VULKAN)


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def softmax_logits_vulkan(s):
    """softmax over logits of about 1e5 (Linear(16, 16), then a logit scale of 1e5), on the Vulkan device."""
    return via_pnnx(s, "softmax-logits", VULKAN)


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def arithmetic_off_only(s):
    """The L2 norm on Vulkan with only use_fp16_arithmetic off: the activations are still stored as fp16."""
    return via_pnnx(s, "l2-norm", {**VULKAN, "use_fp16_arithmetic": False})


@checks.bug("ncnn", SIGS, needs=["pnnx"], **FP16)
def storage_off_only(s):
    """The L2 norm on Vulkan with only use_fp16_storage off: use_fp16_packed still packs them as fp16."""
    return via_pnnx(s, "l2-norm", {**VULKAN, "use_fp16_storage": False})


@checks.control("ncnn", needs=["pnnx"])
def l2_norm_cpu(s):
    """The same .param/.bin on ncnn's CPU path (x86): activations stay fp32. Runs where there is no Vulkan device."""
    return via_pnnx(s, "l2-norm", CPU)


@checks.control("ncnn", needs=["pnnx"])
def softmax_logits_cpu(s):
    """The softmax model's .param/.bin on ncnn's CPU path."""
    return via_pnnx(s, "softmax-logits", CPU)


@checks.control("ncnn", needs=["pnnx"], **FP16)
def l2_norm_small_vulkan(s):
    """The L2 norm of features of about 10 (every intermediate under 65504) on the Vulkan device, defaults."""
    return via_pnnx(s, "l2-norm-small", VULKAN)


@checks.workaround("ncnn", "fp16-off", needs=["pnnx"])
def fp16_off(s):
    """The L2 norm on Vulkan with use_fp16_storage, use_fp16_packed and use_fp16_arithmetic off."""
    return via_pnnx(s, "l2-norm", FP16_OFF)


@checks.workaround("ncnn", "fp16-off", needs=["pnnx"])
def fp16_off_softmax(s):
    """The softmax model on Vulkan with the three fp16 options off."""
    return via_pnnx(s, "softmax-logits", FP16_OFF)


@checks.workaround("ncnn", "rescale", needs=["pnnx"], **FP16)
def rescale(s):
    """The features divided by 256 before squaring and the length multiplied by 256 after; Vulkan defaults."""
    return via_pnnx(s, "l2-norm-rescaled", VULKAN)


@checks.variants("ncnn", SIGS, PNNX_VARIANTS, needs=["pnnx"], **FP16)
def vulkan(s, case):
    """pnnx (from TorchScript, or from ONNX for the -opset/-dynamo/-onnxsim names), ncnn on Vulkan, defaults."""
    return via_pnnx(s, case, VULKAN, "onnx" if case.endswith(FROM_ONNX) else "torchscript")


@checks.variants("onnx2ncnn", SIGS, ONNX2NCNN_VARIANTS, needs=["ncnn"], **FP16)
def onnx2ncnn_vulkan(s, case):
    """onnx2ncnn from the opset 11 export, ncnn on Vulkan, defaults."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], options=VULKAN)
