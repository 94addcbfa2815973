from kb.checks import Checks

checks = Checks(__file__)
# The measurement first (a wrong output), then pnnx's line that explains it where the output is not compared.
BUG = ["wrong-output", "padding-mode-unsupported"]
# pnnx stores conv weights as fp16 by default (fp16=1): a correct conversion differs from torch by a few 1e-4.
# The failure measured is orders larger (0.94).
TOL = dict(atol=3e-3, rtol=1e-3)


def via_pnnx(s, source, case, **kw):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"], **kw)


@checks.variants("pnnx", BUG, ["conv-reflect-near-miss", "conv-replicate-near-miss"], needs=["ncnn"], **TOL)
def onnx(s, case):
    """pnnx from the ONNX export, run by ncnn as pnnx's script feeds it."""
    return via_pnnx(s, s.artifacts.onnx(case), case)
