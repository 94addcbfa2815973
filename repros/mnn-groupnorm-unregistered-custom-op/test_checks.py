from convkb.checks import Checks

checks = Checks(__file__)


@checks.bug("mnn", ["unsupported-op"])
def convert_default_flags(s):
    """What a user sees first: mnnconvert refuses the unknown op (and still exits 0)."""
    return s.mnn.run(s.mnn.convert("custom-op"))


@checks.bug("mnn", ["broadcast-error", "compute-shape-error"])
def convert_allow_custom_op(s):
    """With --allowCustomOp the model converts; the unknown op gets its input's shape at run time."""
    return s.mnn.run(s.mnn.convert("custom-op", "--allowCustomOp"))


@checks.variants("mnn", ["broadcast-error", "compute-shape-error", "conv-shape-error"],
                 ["v-relu", "v-scalar-mul", "v-silu", "v-relu-mul", "v-opset17", "v-conv-between",
                  "v-shape-preserving-op", "v-no-groupnorm", "v-batchnorm-conv"])
def allow_custom_op(s, case):
    """mnnconvert --allowCustomOp, then run."""
    return s.mnn.run(s.mnn.convert(case, "--allowCustomOp"))


@checks.workaround("mnn", "export-standard-ops", atol=1e-4, rtol=1e-4)
def export_standard_ops(s):
    """The same computation exported with standard ONNX ops converts and matches torch."""
    return s.mnn.run(s.mnn.convert("standard-ops"))

