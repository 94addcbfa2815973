from kb.checks import Checks

checks = Checks(__file__)
BUG = ["einsum-input-size", "op-not-support"]


@checks.variants("mnn", BUG, ["batched-chain", "outer-product", "weight-operand", "relu-before", "tanh-before",
                              "opset17", "onnxsim", "dynamo", "two-operands-near-miss", "matmul-near-miss"])
def convert_run(s, case):
    """Default conversion, Module API."""
    return s.mnn.run(s.mnn.convert(case))
