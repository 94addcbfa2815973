from convkb.checks import Checks

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


def ts(s, case):
    return via_pnnx(s, s.artifacts.torchscript(case), case)


def onnx(s, case):
    return via_pnnx(s, s.artifacts.onnx(case), case)


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def torchscript_index(s):
    """y = conv(x); y[0], pnnx from TorchScript."""
    return ts(s, "index")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def onnx_index(s):
    """The same from ONNX: a Gather on axis 0 with a scalar index."""
    return onnx(s, "index")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def torchscript_unbind(s):
    """y.unbind(0)[0], from TorchScript."""
    return ts(s, "unbind")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def onnx_unbind(s):
    """The same from ONNX: Split on axis 0, then Squeeze."""
    return onnx(s, "unbind")


@checks.bug("pnnx", BUG, needs=["ncnn"], **TOL)
def torchscript_segnet(s):
    """A segmentation network that returns out[0].softmax(0), from TorchScript."""
    return ts(s, "segnet")


@checks.control("pnnx", needs=["ncnn"], **TOL)
def torchscript_channel(s):
    """y[:, 0], a select along the channel axis, from TorchScript."""
    return ts(s, "channel")


@checks.workaround("pnnx", "squeeze", needs=["ncnn"], **TOL)
def torchscript_index_as_squeeze(s):
    """y.squeeze(0) instead of y[0] (batch 1), from TorchScript; judged against y[0]'s torch output."""
    return ts(s, "index-as-squeeze")


@checks.workaround("pnnx", "squeeze", needs=["ncnn"], **TOL)
def onnx_index_as_squeeze(s):
    return onnx(s, "index-as-squeeze")


@checks.workaround("pnnx", "squeeze", needs=["ncnn"], **TOL)
def torchscript_segnet_squeeze(s):
    """The segmentation network with out.squeeze(0).softmax(0), from TorchScript."""
    return ts(s, "segnet-squeeze")


@checks.workaround("pnnx", "keep-batch", needs=["ncnn"], **TOL)
def torchscript_index_as_slice(s):
    """y[0:1] instead of y[0]: the batch axis is kept (the output has a leading 1)."""
    return ts(s, "index-as-slice")


@checks.variants("pnnx", BUG, VARIANTS, needs=["ncnn"], **TOL)
def variant(s, case):
    """pnnx from the ONNX export, run by ncnn as pnnx's script feeds it."""
    return onnx(s, case)
