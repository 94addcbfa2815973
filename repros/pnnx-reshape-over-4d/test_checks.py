from kb.checks import Checks

checks = Checks(__file__)
# What ncnn does with the file first (the failure the user meets), then pnnx's own line, which names the
# cause, for a failure of any other kind.
BUG = ["reshape-not-registered", "load-param-failed", "ncnn-crash", "wrong-shape", "wrong-output",
       "rank-not-supported"]
# pnnx stores weights as fp16 by default (fp16=1): a correct conversion differs from torch by a few 1e-4.
TOL = dict(atol=2e-3, rtol=1e-3)
VARIANTS = ["partition-opset13", "partition-opset18", "partition-dynamo", "partition-onnxsim", "reverse-opset17",
            "reverse-dynamo", "patch-embed-partition", "swin-block", "swin-block-dynamo", "partition-4d-near-miss",
            "reverse-4d-dynamo-near-miss", "swin-block-4d-near-miss", "channel-shuffle-near-miss",
            "permute-5d-after-conv-near-miss"]


@checks.variants("pnnx", BUG, VARIANTS, needs=["ncnn"], **TOL)
def variant(s, case):
    """pnnx from the ONNX export, run by ncnn as pnnx's script feeds it."""
    return s.pnnx.to_ncnn(case, source="onnx")
