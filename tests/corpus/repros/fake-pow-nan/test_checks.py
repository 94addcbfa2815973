from kb.checks import Checks

checks = Checks(__file__)


@checks.bug("onnxruntime", ["all-nan"])
def sqrt(s):
    return s.onnxruntime.run(s.artifacts.onnx("sqrt"), "sqrt")
