"""KB211: pnnx on the case's ONNX export (dynamic axes) with a second input shape, then the *_pnnx.py it writes (the
model rebuilt in PyTorch) run on the case's input (s.pnnx.script)."""

from kb.checks import Checks

checks = Checks(__file__)


@checks.bug("pnnx", ["expand-undefined"])
def pnnx_py_onnx_add_expand_as(s):
    """y + bias.expand_as(y), from ONNX with inputshape2: pnnx, then its *_pnnx.py."""
    return s.pnnx.script(s.artifacts.onnx("add-expand-as"), "add-expand-as", flags=["inputshape2=[1,3,8,32]"])
