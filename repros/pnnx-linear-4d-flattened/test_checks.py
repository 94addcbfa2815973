import sys

from kb.checks import Checks
from kb.child import run_command
from kb.compare import Outputs

checks = Checks(__file__)

# kb traces each case whole; the model the user converts for the workaround stops before the reshape back, so it is
# traced here, in a child process that imports torch, from case "rows" (repro.py seeds it: the same weights).
SCRIPT = """
import importlib.util, sys
import torch
spec = importlib.util.spec_from_file_location("repro", sys.argv[1])
repro = importlib.util.module_from_spec(spec)
spec.loader.exec_module(repro)
case = next(c for c in repro.cases() if c.name == "rows")
model = case.module.eval()
model.op = "rows-only"
torch.jit.trace(model, case.inputs).save(sys.argv[2])
print("torch.jit.trace rows-only ->", sys.argv[2])
"""


@checks.workaround("pnnx", "rows-in-app", needs=["ncnn"], atol=0.002)
def rows_reshaped_in_app(s):
    """The Linear on (rows, 4) in the model, its (4, 3) output the model's; traced, through pnnx / ncnn fed as it
    is; numpy reshapes ncnn's output to torch's (1, 2, 2, 3), compared with linear-4d's torch output."""
    pt = s.path("rows-only.pt")
    s.step(run_command("torch.jit.trace rows-only", [sys.executable, "-c", SCRIPT, str(s.entry.repro), str(pt)],
                       shown="torch.jit.trace(model, x).save('rows-only.pt')"), produces=[pt])
    param, bin = s.pnnx.convert(pt, "rows")
    got = s.ncnn.run(param, bin, "rows", ["in0"], ["out0"], batch=True).arrays["out0"]
    ref = s.artifacts.reference("linear-4d")
    shape = ref.arrays["out0"].shape
    got = got.reshape(shape) if got.size == ref.arrays["out0"].size else got  # a wrong size stays as it is
    return s.against(Outputs("rows", {"out0": got}, "ncnn + reshape"), ref)
