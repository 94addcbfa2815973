import sys

from kb.checks import Checks
from kb.child import run_command

checks = Checks(__file__)
LOG = ("print('convert --allowCustomOp'); print('Broad cast error, dim1 = 8, dim2 = 4'); raise SystemExit(3)")


@checks.bug("onnxruntime", ["broadcast-error"])
def convert(s):
    """Stands for the engine: prints what MNN prints for this cause (the evidence, then the message), and fails."""
    s.step(run_command("onnxruntime fake-convert", [sys.executable, "-c", LOG]))
    return s.onnxruntime.run(s.artifacts.onnx("custom-op"), "custom-op")


@checks.workaround("onnxruntime", "standard-ops")
def standard_ops(s):
    return s.onnxruntime.run(s.artifacts.onnx("standard-ops"), "standard-ops")
