"""KB183: pnnx on the traced model, then the *_pnnx.py it writes (the model rebuilt in PyTorch) run on the case's
inputs (s.pnnx.script)."""

from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)


def pnnx_py(s, case: str) -> Outputs:
    """pnnx on the case's traced model; then its *_pnnx.py, run."""
    return s.pnnx.script(s.artifacts.torchscript(case), case)


@checks.bug("pnnx", ["tuple-as-tensor"])
def pnnx_py_one_section(s):
    """x.split([16], 1)[0], then relu and + 1: pnnx, then the generated *_pnnx.py."""
    return pnnx_py(s, "one-section")


@checks.control("pnnx")
def pnnx_py_two_sections(s):
    """Control: the same split into two sections (8, 8), the first added to the last."""
    return pnnx_py(s, "two-sections")


@checks.workaround("pnnx", "no-split")
def pnnx_py_one_section_tuple(s):
    """The model writes (y,) instead of y.split([16], 1) where there is one section."""
    return pnnx_py(s, "one-section-tuple")


@checks.variants("pnnx", ["tuple-as-tensor"])
def variant(s, case):
    """pnnx, then the generated *_pnnx.py."""
    return pnnx_py(s, case)
