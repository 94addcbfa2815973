import sys

from kb.checks import Checks
from kb.child import run_command

checks = Checks(__file__)

# kb exports only traced TorchScript (Case(torchscript=True)); the scripted file is made here, in a child
# process that imports torch, from the same case (repro.py seeds it, so the weights are the same).
SCRIPT = """
import importlib.util, sys
import torch
spec = importlib.util.spec_from_file_location("repro", sys.argv[1])
repro = importlib.util.module_from_spec(spec)
spec.loader.exec_module(repro)
case = next(c for c in repro.cases() if c.name == sys.argv[2])
torch.jit.script(case.module.eval()).save(sys.argv[3])
print("torch.jit.script", sys.argv[2], "->", sys.argv[3])
"""


def scripted(s, case):
    """The case's module as torch.jit.script(model).save(...) writes it."""
    out = s.path(f"{case}-scripted.pt")
    s.step(run_command(f"torch.jit.script {case}", [sys.executable, "-c", SCRIPT, str(s.entry.repro), case, str(out)],
                       shown=f"torch.jit.script(model).save('{out.name}')"),
           produces=[out])
    return out


@checks.bug("pnnx", ["pnnx-crash"], needs=["ncnn"])
def scripted_conv_relu(s):
    """torch.jit.script of a Conv2d + ReLU, given to pnnx: it crashes in pass_level1."""
    return s.pnnx.to_ncnn("conv-relu", source=scripted(s, "conv-relu"))


@checks.bug("pnnx", ["pnnx-crash"], needs=["ncnn"])
def scripted_conv_branch(s):
    """torch.jit.script of a model with a branch on the input's shape."""
    return s.pnnx.to_ncnn("conv-branch", source=scripted(s, "conv-branch"))


# atol 1e-3: pnnx writes the weights as fp16 by default (fp16=1); the traced files differ from torch by 4.3e-4.


# atol 1e-3: pnnx writes the weights as fp16 by default (fp16=1); the traced files differ from torch by 4.3e-4.
