from kb.checks import Checks

checks = Checks(__file__)


@checks.workaround("onnx2ncnn", "noop", needs=["ncnn"])
def identity_as_noop(s):
    """onnx2ncnn on the twice model, then each Identity line of the .param renamed to ncnn's Noop layer."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx("twice"))
    noop = s.path("twice.noop.param")
    noop.write_text("".join(("Noop    " + line[8:]) if line.startswith("Identity") else line
                            for line in param.read_text().splitlines(keepends=True)))
    return s.ncnn.run(noop, bin, "twice", ["in0"], ["out0", "out1"])
