from pathlib import Path

from kb import child
from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)
CALL = Path(__file__).resolve().parent / "call.py"


def call(s, mode: str) -> Outputs:
    """Convert, then run call.py in a child with MODE: the user's own Python code."""
    model = s.mnn.convert("three-outputs")
    out = s.path(f"{mode}.npz")
    glb = {"MODEL": str(model), "FEED": str(s.artifacts.inputs("three-outputs")), "OUT": str(out),
           "OUTPUTS": s.artifacts.case("three-outputs")["outputs"], "MODE": mode}
    s.step(child.run_function(f"MNN {mode} {model.name}", "runpy:run_path", path_name=str(CALL), init_globals=glb,
                              shown=f"python call.py  # MODE={mode}"), produces=[out])
    return Outputs.load("three-outputs", out, f"MNN {s.mnn.version()} ({mode})")


@checks.bug("mnn", ["first-output-only"])
def forward_one_var(s):
    """ys = net.forward(x) with x one Var: a Var comes back (the first output), so `a, b, c = ys` fails."""
    return call(s, "forward-var")


@checks.bug("mnn", ["onforward-crash"])
def onforward_one_var(s):
    """ys = net.onForward(x) with x one Var (not a list)."""
    return call(s, "onforward-var")


@checks.workaround("mnn", "pass-a-list")
def forward_list(s):
    """ys = net.forward([x]): a list in, the list of all three outputs out."""
    return call(s, "forward-list")
