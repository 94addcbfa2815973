"""pnnx: ncnn's recommended converter, from TorchScript or ONNX to ncnn (and pnnx) files."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from kb import child
from kb.child import StepResult, run_command
from kb.compare import Outputs
from kb.engines.base import Engine

NO_BATCH = 233  # pnnx's batch_index for "this blob has no batch axis"

# How pnnx's *_ncnn.py feeds an input and reads an output. Newer pnnx:
#     ex.input("in0", ncnn.Mat(in0.numpy(), batch_index=0).clone())
#     out.append(torch.from_numpy(out0.numpy(batch_index=233)))
# older pnnx (no batch axis: no squeeze / unsqueeze):
#     ex.input("in0", ncnn.Mat(in0.squeeze(0).numpy()).clone())
#     out.append(torch.from_numpy(np.array(out0)).unsqueeze(0))
_INPUT = re.compile(r'ex\.input\(\s*"(?P<blob>[^"]+)"\s*,\s*ncnn\.Mat\(\s*\w+(?:\.squeeze\((?P<squeeze>-?\d+)\))?'
                    r'\.numpy\(\)\s*(?:,\s*batch_index\s*=\s*(?P<index>-?\d+))?\s*\)')
_EXTRACT = re.compile(r'(?P<var>\w+)\s*=\s*ex\.extract\(\s*"(?P<blob>[^"]+)"')
_OUTPUT = re.compile(r'torch\.from_numpy\(\s*(?:np\.array\((?P<var>\w+)\)\s*\)(?:\.unsqueeze\((?P<unsqueeze>-?\d+)\))?'
                     r'|(?P<var2>\w+)\.numpy\(\s*batch_index\s*=\s*(?P<index>-?\d+)\s*\)\s*\))')


@dataclass
class Feeding:
    """Per ncnn blob, pnnx's batch axis (None: no batch axis), as pnnx's own *_ncnn.py handles it."""

    script: Path
    inputs: dict[str, int | None] = field(default_factory=dict)
    outputs: dict[str, int | None] = field(default_factory=dict)


def _axis(*found: str | None) -> int | None:
    for f in found:
        if f is not None:
            return None if int(f) == NO_BATCH else int(f)
    return None


def script_for(param: Path) -> Path:
    """Where PNNX.convert has pnnx write its *_ncnn.py for `param` (pnnx's own naming)."""
    return param.with_name(param.name.removesuffix(".ncnn.param").removesuffix(".param") + "_ncnn.py")


def read_feeding(script: Path) -> Feeding | None:
    """How pnnx's *_ncnn.py feeds each input and reads each output; None if there is no such script."""
    try:
        text = script.read_text(errors="replace")
    except OSError:
        return None
    feeding = Feeding(script)
    for m in _INPUT.finditer(text):
        feeding.inputs[m["blob"]] = _axis(m["index"], m["squeeze"])
    blob_of = {m["var"]: m["blob"] for m in _EXTRACT.finditer(text)}
    for m in _OUTPUT.finditer(text):
        var = m["var"] or m["var2"]
        if var in blob_of:
            feeding.outputs[blob_of[var]] = _axis(m["index"], m["unsqueeze"])
    return feeding if feeding.inputs else None


def feeding(param: Path) -> Feeding | None:
    """pnnx's feeding for a .param that PNNX.convert wrote, or None for any other .param."""
    return read_feeding(script_for(param))


def executable() -> str:
    """The pnnx binary of the pnnx package on the path (its EXEC_PATH), found without importing the package: that
    imports torch, 4 s in each process that converts."""
    import importlib.util

    spec = importlib.util.find_spec("pnnx")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'pnnx'")
    return str(Path(next(iter(spec.submodule_search_locations))) / "pnnx")


def convert_step(model: Path, work: Path, shapes: list[str], fp16: bool | None = None, timeout: float | None = None,
                 memory: int | None = None, flags=(), external=()) -> tuple[StepResult, Path, Path]:
    """pnnx `model` (.pt or .onnx, copied into `work`, where pnnx writes its outputs) with input shapes `shapes`
    (pnnx's inputshape= items, e.g. "[1,3,4,5]" or "[1,7]i64") and pnnx's own `flags` (e.g. "optlevel=0"), in a
    child; return the step and the ncnn (param, bin) it should have written. `external`: the model's external
    data files (paths relative to it), copied beside it. Session-free, so kb.conform, kb.locate and bench/arch
    convert exactly as the checks do."""
    work.mkdir(parents=True, exist_ok=True)
    src = work / model.name  # pnnx writes its outputs next to its input
    shutil.copy(model, src)
    # torch's dynamo export keeps the weights beside the model as <model>.data
    for name in dict.fromkeys([model.name + ".data", *external]):
        data = model.parent / name
        if data.is_file() and not (work / name).exists():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(data, work / name)
    shape = ",".join(shapes)
    param, bin = work / f"{src.stem}.ncnn.param", work / f"{src.stem}.ncnn.bin"
    py = script_for(param)
    # Named explicitly: pnnx otherwise derives names from the input's, with '-' turned into '_'.
    argv = [executable(), str(src), f"inputshape={shape}", f"ncnnparam={param}", f"ncnnbin={bin}",
            f"ncnnpy={py}"] + ([] if fp16 is None else [f"fp16={int(fp16)}"]) + list(flags)
    # pnnx runs the model in its libtorch once, for the shapes: on one thread (the graph it writes is the same), as
    # libtorch's idle OpenMP threads otherwise spin on the cores the other steps use
    step = run_command(f"pnnx {model.name}", argv, cwd=work, timeout=timeout, memory=memory, warm=True,
                       env={"OMP_NUM_THREADS": "1"},
                       shown=" ".join([f"pnnx {model.name} inputshape={shape} ncnnparam={param.name} ncnnbin={bin.name} "
                                       f"ncnnpy={py.name}", *([] if fp16 is None else [f"fp16={int(fp16)}"]), *flags]))
    return step, param, bin


class PNNX(Engine):
    name = "pnnx"

    def convert(self, model: Path, case: str, fp16: bool | None = None, flags=()) -> tuple[Path, Path]:
        """Convert a .pt or .onnx file; return the ncnn (param, bin) it writes. `fp16`: pnnx's fp16= option
        (weights stored as fp16 in the .bin; pnnx's default is on), else pnnx's default; `flags`: more of pnnx's
        key=value options (optlevel=0, moduleop=...).

        pnnx also writes the *_ncnn.py that runs them (`script_for(param)`); `feeding(param)` reads from
        it whether each blob has a batch axis, which s.ncnn.run follows.
        """
        work = self.s.path(f"pnnx-{model.suffix[1:]}")
        shapes = [str(s).replace(" ", "") for s in self.s.artifacts.case(case)["inputs"].values()]
        step, param, bin = convert_step(model, work, shapes, fp16, flags=flags)
        self.s.step(step, produces=[param, bin])
        return param, bin

    def script(self, model: Path, case: str, flags=()) -> Outputs:
        """Convert `model` with pnnx's `flags`, then run the *_pnnx.py it writes (the model rebuilt in PyTorch, with
        its weights from the .pnnx.bin) on the case's inputs: where pnnx's own rewrite of the model goes wrong."""
        self.convert(model, case, flags=flags)
        py = next(self.s.path(f"pnnx-{model.suffix[1:]}").glob("*_pnnx.py"))  # named after the model, '-' as '_'
        out = self.s.path(f"{case}.pnnx-py.npz")
        self.s.step(child.run_function(f"pnnx {py.name} forward", "kb.workers.pnnx_py:run", preload=("torch",),
                                       shown=f"python -c 'Model() of {py.name}, called on the case's input'",
                                       py=str(py), inputs=str(self.s.artifacts.inputs(case)), out=str(out),
                                       outputs=list(self.s.artifacts.case(case)["outputs"])),
                    produces=[out])
        return Outputs.load(case, out, f"pnnx {self.version()} _pnnx.py")

    def to_ncnn(self, case: str, source: str | Path = "torchscript", inputs=("in0",), outputs=("out0",)):
        """The pnnx path users take: convert the case's traced TorchScript (or its "onnx", or a model
        file), then run the .param on ncnn, fed as pnnx's own script feeds it."""
        model = source if isinstance(source, Path) else (
            self.s.artifacts.torchscript(case) if source == "torchscript" else self.s.artifacts.onnx(case))
        param, bin = self.convert(model, case)
        return self.s.ncnn.run(param, bin, case, list(inputs), list(outputs))

    @staticmethod
    def feeding(param: Path) -> Feeding | None:
        return feeding(param)
