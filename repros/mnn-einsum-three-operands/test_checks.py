from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["einsum-input-size", "op-not-support"]


@checks.bug("mnn", BUG)
def bilinear(s):
    """einsum('bi,ij,bj->b', a, W, c) in one call."""
    return s.mnn.run(s.mnn.convert("bilinear"))


@checks.workaround("mnn", "two-einsums")
def split_two_einsums(s):
    """The same product as two einsums of two operands each."""
    return s.mnn.run(s.mnn.convert("split-two-einsums"))


@checks.workaround("mnn", "matmul")
def matmul(s):
    """((a @ W) * c).sum(-1): MatMul, Mul, ReduceSum."""
    return s.mnn.run(s.mnn.convert("matmul"))


@checks.workaround("mnn", "matmul")
def batched_matmul(s):
    """torch.matmul(torch.matmul(a, b), c) for 'bik,bkl,blj->bij'."""
    return s.mnn.run(s.mnn.convert("batched-matmul"))


@checks.variants("mnn", BUG, ["batched-chain", "outer-product", "weight-operand", "relu-before", "tanh-before",
                              "opset17", "onnxsim", "dynamo", "two-operands-near-miss", "matmul-near-miss"])
def convert_run(s, case):
    """Default conversion, Module API."""
    return s.mnn.run(s.mnn.convert(case))
