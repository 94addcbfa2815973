"""KB183: pnnx on the traced model, then the *_pnnx.py it writes (the model rebuilt in PyTorch) run on the case's
inputs by run_pnnx_py.py: the Model class built, its weights loaded from the .pnnx.bin, forward called."""

from kb import child
from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)


def pnnx_py(s, case: str) -> Outputs:
    """pnnx on the case's traced model; then its *_pnnx.py, run."""
    s.pnnx.convert(s.artifacts.torchscript(case), case)
    work = s.path("pnnx-pt")
    py = next(work.glob("*_pnnx.py"))  # pnnx names it after the model file, '-' written as '_'
    out = s.path(f"{case}.pnnx-py.npz")
    glb = {"PY": str(py), "INPUTS": str(s.artifacts.inputs(case)), "OUT": str(out),
           "OUTPUTS": list(s.artifacts.case(case)["outputs"])}
    s.step(child.run_function(f"pnnx {py.name} forward", "runpy:run_path", preload=("torch",),
                              path_name=str(s.entry.dir / "run_pnnx_py.py"), init_globals=glb,
                              shown=f"python run_pnnx_py.py  # Model() of {py.name}, called on the case's input"),
           produces=[out])
    return Outputs.load(case, out, f"pnnx {s.pnnx.version()} _pnnx.py")


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
