from kb.checks import Checks

checks = Checks(__file__)


@checks.bug("onnxruntime", ["drift"])
def silu(s):
    return s.onnxruntime.run(s.artifacts.onnx("silu"), "silu")
