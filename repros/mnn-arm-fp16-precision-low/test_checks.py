from convkb.checks import Checks

checks = Checks(__file__)
SIGS = ["overflow-nan", "overflow-wrong"]
# The emulated CPUs (qemu-user, convkb.tools.arm64): cortex-a76 is ARMv8.2 with fp16 arithmetic, cortex-a72 ARMv8.0
# without. Where the emulation is not set up, s.mnn.run raises Unavailable and the check is skipped.
V82, V80 = "cortex-a76", "cortex-a72"
# With precision low on an ARMv8.2 CPU every activation is fp16 (11 significant bits): the in-range models differ
# from torch by a few parts in 1e4 relative. These tolerances pass that rounding and fail an inf, a NaN or a result
# off by more than 1%.
FP16 = {"atol": 1e-2, "rtol": 1e-2}


@checks.bug("mnn", SIGS, **FP16)
def l2_norm_low(s):
    """sqrt(sum(x * x)) over 64 features of about 100; Module API, emulated cortex-a76, precision low."""
    return s.mnn.run(s.mnn.convert("l2-norm"), cpu=V82, precision="low")


@checks.bug("mnn", SIGS, **FP16)
def l2_norm_low_session(s):
    """The same .mnn with the Session API (createSession with precision low), as C++ apps run it."""
    return s.mnn.run_session(s.mnn.convert("l2-norm"), cpu=V82, precision="low")


@checks.bug("mnn", SIGS, **FP16)
def softmax_logits_low(s):
    """softmax over logits of about 1e5 (Linear(16, 16), then a logit scale of 1e5); cortex-a76, precision low."""
    return s.mnn.run(s.mnn.convert("softmax-logits"), cpu=V82, precision="low")


@checks.control("mnn", **FP16)
def l2_norm_armv80_low(s):
    """The same .mnn with precision low on an ARMv8.0 CPU (cortex-a72, no fp16 arithmetic): MNN stays in fp32."""
    return s.mnn.run(s.mnn.convert("l2-norm"), cpu=V80, precision="low")


@checks.control("mnn", **FP16)
def l2_norm_small_low(s):
    """The L2 norm of features of about 10 (every intermediate under 65504) on cortex-a76, precision low."""
    return s.mnn.run(s.mnn.convert("l2-norm-small"), cpu=V82, precision="low")


@checks.workaround("mnn", "precision-normal")
def precision_normal(s):
    """The L2 norm on cortex-a76 with precision normal (Module API)."""
    return s.mnn.run(s.mnn.convert("l2-norm"), cpu=V82, precision="normal")


@checks.workaround("mnn", "precision-normal")
def precision_high_session(s):
    """The L2 norm on cortex-a76 with precision high (Session API)."""
    return s.mnn.run_session(s.mnn.convert("l2-norm"), cpu=V82, precision="high")


@checks.workaround("mnn", "precision-normal")
def precision_normal_softmax(s):
    """The softmax model on cortex-a76 with precision normal."""
    return s.mnn.run(s.mnn.convert("softmax-logits"), cpu=V82, precision="normal")


@checks.workaround("mnn", "rescale", **FP16)
def rescale(s):
    """The features divided by 256 before squaring and the length multiplied by 256 after; cortex-a76, low."""
    return s.mnn.run(s.mnn.convert("l2-norm-rescaled"), cpu=V82, precision="low")


@checks.variants("mnn", SIGS, **FP16)
def arm82_low(s, case):
    """mnnconvert on x86, then the Module API on an emulated cortex-a76 with precision low."""
    return s.mnn.run(s.mnn.convert(case), cpu=V82, precision="low")
