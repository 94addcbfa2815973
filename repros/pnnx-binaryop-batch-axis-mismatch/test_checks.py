from kb.checks import Checks

checks = Checks(__file__)
# pnnx's own line first: with it, the *_ncnn.py pnnx writes feeds the sequence axis as the batch axis, which
# kb's ncnn worker refuses (it feeds one sample at a time), so the values are not compared. Then what ncnn does
# on a release that converts without the line.
BUG = ["batch-axis-mismatch", "wrong-values", "wrong-shape", "ncnn-crash"]
# pnnx stores weights as fp16 by default (fp16=1): a correct conversion differs from torch by a few 1e-4.
TOL = dict(atol=2e-3, rtol=1e-3)
VARIANTS = ["ln-mha", "ln-mha-opset18", "ln-mha-batch2", "ln-gru", "ln-lstm", "encoder", "relu-mha", "linear-mha",
            "relu-gru", "ln-bt-mha", "ln-bt-gru"]
# opset 14 writes the LayerNorm as its arithmetic: only the ONNX file has that form
DECOMPOSED = ["ln-mha-opset14", "ln-gru-opset14", "ln-mha-opset14-sim", "relu-mha-opset14", "ln-bt-mha-opset14"]


def via_pnnx(s, source, case):
    param, bin = s.pnnx.convert(source, case)
    return s.ncnn.run(param, bin, case, ["in0"], ["out0"])


def ts(s, case):
    return via_pnnx(s, s.artifacts.torchscript(case), case)


def onnx(s, case):
    return via_pnnx(s, s.artifacts.onnx(case), case)


@checks.variants("pnnx", BUG, VARIANTS, needs=["ncnn"], **TOL)
def variant(s, case):
    """pnnx from the traced TorchScript (pnnx's own input), run by ncnn as pnnx's script feeds it."""
    return ts(s, case)


@checks.variants("pnnx", BUG, DECOMPOSED, needs=["ncnn"], **TOL)
def variant_onnx(s, case):
    """pnnx from the ONNX export, where a LayerNorm below opset 17 is ReduceMean ... Div, Mul, Add."""
    return onnx(s, case)
