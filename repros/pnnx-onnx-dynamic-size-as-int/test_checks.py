"""KB185: pnnx on the case's ONNX export (dynamic axes) with a second input shape, then the *_pnnx.py it writes (the
model rebuilt in PyTorch) run on the case's input (s.pnnx.script). The workarounds convert the traced TorchScript,
or the ONNX file for one shape."""

from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)

SHAPE2 = "inputshape2=[1,3,8,32]"  # every case's input is (1, 3, 8, 16): a second, wider shape


def pnnx_py(s, case: str, source: str = "onnx", flags=(SHAPE2,)) -> Outputs:
    """pnnx on the case's ONNX (or traced) model with `flags`; then its *_pnnx.py, run."""
    model = s.artifacts.onnx(case) if source == "onnx" else s.artifacts.torchscript(case)
    return s.pnnx.script(model, case, flags=list(flags))


@checks.bug("pnnx", ["int-as-tensor"])
def pnnx_py_onnx_expand(s):
    """bias.expand(b, 8, h, w) of the conv output's sizes, from ONNX with inputshape2: pnnx, then its *_pnnx.py."""
    return pnnx_py(s, "expand")


@checks.workaround("pnnx", "torchscript")
def pnnx_py_torchscript_expand(s):
    """The same model traced, converted by pnnx with the same inputshape2."""
    return pnnx_py(s, "expand", source="torchscript")


@checks.workaround("pnnx", "fixed-shape")
def pnnx_py_onnx_expand_fixed_shape(s):
    """The same ONNX file converted for its one input shape (no inputshape2)."""
    return pnnx_py(s, "expand", flags=())


@checks.variants("pnnx", ["int-as-tensor"])
def variant(s, case):
    """pnnx on the ONNX export with inputshape2, then the generated *_pnnx.py."""
    return pnnx_py(s, case)
