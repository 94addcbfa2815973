from kb.checks import Checks

checks = Checks(__file__)


@checks.variants("mnn", ["broadcast-error", "compute-shape-error", "conv-shape-error"],
                 ["v-relu", "v-scalar-mul", "v-silu", "v-relu-mul", "v-opset17", "v-conv-between",
                  "v-shape-preserving-op", "v-no-groupnorm", "v-batchnorm-conv"])
def allow_custom_op(s, case):
    """mnnconvert --allowCustomOp, then run."""
    return s.mnn.run(s.mnn.convert(case, "--allowCustomOp"))
