from pathlib import Path

import numpy as np

from kb import child
from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)
CALL = Path(__file__).resolve().parent / "call.py"


def call(s, mode: str) -> Outputs:
    """Convert, then run call.py in a fresh Python with MODE."""
    model = s.mnn.convert("small-net")
    out = s.path(f"{mode}.npz")
    with np.load(s.artifacts.inputs("small-net")) as z:
        x = next(iter(z.values())).astype(np.float32)
    glb = {"MODEL": str(model), "X": x.flatten().tolist(), "SHAPE": list(x.shape), "OUT": str(out), "MODE": mode}
    s.step(child.run_function(f"MNN {mode} {model.name}", "runpy:run_path", path_name=str(CALL), init_globals=glb,
                              shown=f"python call.py  # MODE={mode}"), produces=[out])
    return Outputs.load("small-net", out, f"MNN {s.mnn.version()} ({mode})")


@checks.bug("mnn", ["no-numpy-crash"])
def load_without_numpy(s):
    """numpy hidden: nn.load_module_from_file first."""
    return call(s, "no-numpy-load")


@checks.bug("mnn", ["no-numpy-crash"])
def const_without_numpy(s):
    """numpy hidden: F.const(list, shape) for the input, then loading and net.forward([x])."""
    return call(s, "no-numpy-const")


@checks.bug("mnn", ["no-numpy-crash"])
def mnn_numpy_without_numpy(s):
    """numpy hidden: MNN.numpy.array(list) for the input (the thread's np.array([1]))."""
    return call(s, "no-numpy-mnn-numpy")


@checks.workaround("mnn", "install-numpy")
def const_with_numpy(s):
    """numpy installed: the same F.const call."""
    return call(s, "with-numpy")
