from kb.checks import Checks

checks = Checks(__file__)
# What ncnn does with the file first (the failure the user meets), then pnnx's own line, which names the
# cause, for a failure of any other kind.
BUG = ["unbind-not-registered", "load-param-failed", "ncnn-crash", "wrong-shape", "wrong-output",
       "batch-axis-not-supported"]
# pnnx stores conv weights as fp16 by default (fp16=1): a correct conversion differs from torch by a few 1e-4.
TOL = dict(atol=2e-3, rtol=1e-3)
VARIANTS = ["index-opset13", "index-opset18", "index-dynamo", "index-onnxsim", "select", "unbind-opset13",
            "unbind-dynamo", "segnet-opset17", "segnet-dynamo", "channel-near-miss", "slice-near-miss",
            "squeeze-near-miss", "input-index-near-miss", "unbind-after-permute-batch-first",
            "unbind-after-permute-near-miss"]


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


def onnx(s, case):
    return via_pnnx(s, s.artifacts.onnx(case), case)


@checks.variants("pnnx", BUG, VARIANTS, needs=["ncnn"], **TOL)
def variant(s, case):
    """pnnx from the ONNX export, run by ncnn as pnnx's script feeds it."""
    return onnx(s, case)
