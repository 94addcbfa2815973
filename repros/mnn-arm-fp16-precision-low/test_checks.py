from kb.checks import Checks

checks = Checks(__file__)
SIGS = ["overflow-nan", "overflow-wrong"]
# The emulated CPUs (qemu-user, kb.tools.arm64): cortex-a76 is ARMv8.2 with fp16 arithmetic, cortex-a72 ARMv8.0
# without. Where the emulation is not set up, s.mnn.run raises Unavailable and the check is skipped.
V82, V80 = "cortex-a76", "cortex-a72"
# With precision low on an ARMv8.2 CPU every activation is fp16 (11 significant bits): the in-range models differ
# from torch by a few parts in 1e4 relative. These tolerances pass that rounding and fail an inf, a NaN or a result
# off by more than 1%.
FP16 = {"atol": 1e-2, "rtol": 1e-2}


@checks.variants("mnn", SIGS, **FP16)
def arm82_low(s, case):
    """mnnconvert on x86, then the Module API on an emulated cortex-a76 with precision low."""
    return s.mnn.run(s.mnn.convert(case), cpu=V82, precision="low")
