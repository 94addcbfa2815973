"""MNN: converter, offline quantizer and runtime, each driven in a child process.

The `mnnconvert`/`mnnquant` console scripts and MNN.tools.* import a logger that pip-installs a
package and sends telemetry at run time, so we call the native `_tools` module directly.
"""

from __future__ import annotations

import json
from pathlib import Path

from kb import child
from kb.compare import Outputs
from kb.engines.base import Engine
from kb.tools import arm64

WARM = ("numpy", "MNN")  # imported once by the server each run forks from (kb.forkserver)
TOOLS = ("_tools",)  # mnnconvert's and mnnquant's server: their steps must not share a process image with MNN's runtime


def convert_step(src: Path, dst: Path, *flags: str, name: str | None = None, **run) -> child.StepResult:
    """mnnconvert `src` (ONNX) to `dst` in a child; `run`: kb.child.run_function's timeout, cwd.
    Session-free, so bench/arch/label.py converts exactly as the checks do."""
    # An argv for the native _tools.mnnconvert (kb.workers.mnn), not the console script: its
    # first word is only the program name _tools' parser expects.
    # absolute paths: the child may run in another cwd (kb locate's work folder), where a relative path the user
    # gave names nothing ("Model File Does Not Exist!"); links kept, so a check's attempts read the model through
    # paths of other lengths (kb.harness.Session.source)
    argv = ["mnnconvert", "-f", "ONNX", "--modelFile", str(Path(src).absolute()), "--MNNModel", str(Path(dst).resolve()),
            "--bizCode", "kb", *flags]
    shown = " ".join(["mnnconvert -f ONNX --modelFile", src.name, "--MNNModel", dst.name, *flags])
    # mnnconvert writes a scratch file (.__convert_external_data.bin) in its cwd: the output's folder, not a shared one
    return child.run_function(name or f"mnnconvert {src.name} {' '.join(flags)}".strip(), "kb.workers.mnn:convert",
                              argv=argv, shown=shown, **{"preload": TOOLS, "cwd": Path(dst).resolve().parent, **run})


def sequence_calibration(root: Path, inputs: Path, outputs: list[str], method: str, samples: int = 4,
                         seed: int = 0) -> dict:
    """Write calibration data for the inputs in `inputs` (.npz) under `root`, in mnnquant's "sequence"
    layout; return an mnnquant config that uses it (see MNN.sequence_calibration)."""
    import numpy as np

    with np.load(inputs) as z:
        first = {k: z[k] for k in z.files}
    rng = np.random.default_rng(seed)
    shapes = [{"name": k, "shape": list(v.shape)} for k, v in first.items()]
    for i in range(samples):
        d = root / f"sample{i}"
        d.mkdir(parents=True, exist_ok=True)
        for name, arr in first.items():
            data = arr if i == 0 else rng.standard_normal(arr.shape).astype(np.float32) * 0.5
            np.savetxt(d / f"{name}.txt", data.reshape(-1, data.shape[-1]), fmt="%.6f")
        (d / "input.json").write_text(json.dumps({"inputs": shapes, "outputs": outputs}))
    return {"path": str(root), "used_sample_num": samples, "feature_quantize_method": method,
            "weight_quantize_method": "MAX_ABS", "feature_clamp_value": 127, "weight_clamp_value": 127,
            "batch_size": 1, "quant_bits": 8, "skip_quant_op_names": [], "input_type": "sequence",
            "inputs": shapes, "debug": False}


class MNN(Engine):
    name = "mnn"

    def convert(self, case_or_model: str | Path, *flags: str, tag: str = "") -> Path:
        """Convert an ONNX model (a case name or a path) with mnnconvert; return `<case>[.tag].mnn`."""
        src = self.s.source(case_or_model if isinstance(case_or_model, Path) else self.s.artifacts.onnx(case_or_model))
        dst = self.s.path(f"{src.stem}{'.' + tag if tag else ''}.mnn")
        self.s.step(convert_step(src, dst, *flags), produces=[dst])
        return dst

    def quantize(self, model: Path, config: dict, name: str) -> Path:
        """Offline (calibrated) quantization with mnnquant; `config` is its JSON config."""
        dst = self.s.path(name)
        cfg = self.s.path(f"{dst.stem}.quant.json")
        cfg.write_text(json.dumps(config, indent=1))
        argv = ["quantized.out", str(model), str(dst), str(cfg)]
        method = config.get("feature_quantize_method", "?")
        self.s.step(child.run_function(f"mnnquant {method}", "kb.workers.mnn:quantize", argv=argv, preload=TOOLS,
                                 shown=f"mnnquant {model.name} {dst.name} {cfg.name}  # {json.dumps(config)}"),
                    produces=[dst])
        return dst

    def sequence_calibration(self, case: str, method: str, samples: int = 4, seed: int = 0) -> dict:
        """Write calibration data in mnnquant's "sequence" layout; return a config that uses it.

        Layout (tools/quantization/Helper.cpp, calibration.cpp): one folder per sample, holding
        `<input>.txt` (one row per last-dimension vector) and an `input.json` naming inputs and outputs.
        The first sample is the case's own input; the others are seeded random normals.
        """
        return sequence_calibration(self.s.path(f"calibration-{case}"), self.s.artifacts.inputs(case),
                                    self.s.artifacts.case(case)["outputs"], method, samples, seed)

    def _where(self, cpu: str | None, precision: str) -> tuple[dict, str]:
        """run_function's python and env for an emulated arm64 `cpu` (kb.tools.arm64) and its preload, and how outputs
        are labelled."""
        label = "".join([f" on an emulated {cpu}" if cpu else "", f", precision {precision}" if precision != "normal" else ""])
        return {"preload": WARM, **(arm64.runner(cpu, "mnn", self.version()) if cpu else {})}, label

    def run(self, model: Path, case: str | None = None, cpu: str | None = None, precision: str = "normal") -> Outputs:
        """Run `<case>[...].mnn` on the case's inputs with MNN's module API; outputs are named as in the case.
        `precision`: MNN's precision mode (low: fp16 arithmetic where the CPU has it, as on ARMv8.2); `cpu`: an
        emulated arm64 CPU (qemu model, e.g. cortex-a76) with MNN's aarch64 wheel; Unavailable where not set up."""
        case = case or model.name.split(".")[0]
        out = self.s.path(f"{model.stem}.mnn-out.npz")
        meta = self.s.artifacts.case(case)
        feed = self.s.artifacts.inputs(case)
        where, label = self._where(cpu, precision)
        self.s.step(child.run_function(f"MNN run {model.name}{label}", "kb.workers.mnn:run", model=str(model),
                                 feed=str(feed), out=str(out), outputs=meta["outputs"], precision=precision, **where,
                                 shown=f"python -m kb.child  # MNN.nn.load_module_from_file({model.name!r}, "
                                       f"{list(meta['inputs'])}, {meta['outputs']}).forward(<{feed.name}>){label}"),
                    produces=[out])
        return Outputs.load(case, out, f"MNN {self.version()}{label}")

    def convert_run(self, case: str, *flags: str) -> Outputs:
        """The default MNN path: mnnconvert (with `flags`), then the Module API."""
        return self.run(self.convert(case, *flags, tag=""), case)

    def script(self, case: str, script: Path, mode: str, flags=(), lists: bool = False,
               memcheck: bool = False) -> Outputs:
        """Convert `case`, then run `script` (the user's own MNN Python code) by runpy in a fresh Python, with the
        globals MODEL, FEED (the inputs, .npz), OUTPUTS (their names), OUT (the .npz it writes) and MODE; with
        `lists`, also INPUTS ({name: (values as a flat list, shape)}) for code that runs without numpy; with
        `memcheck`, under valgrind (kb.child.under_memcheck: a write outside a block is seen every time)."""
        model = self.convert(case, *flags)
        out = self.s.path(f"{case}.{mode}.npz")
        glb = {"MODEL": str(model), "FEED": str(self.s.artifacts.inputs(case)), "OUT": str(out),
               "OUTPUTS": self.s.artifacts.case(case)["outputs"], "MODE": mode}
        if lists:
            import numpy as np

            with np.load(glb["FEED"]) as z:
                glb["INPUTS"] = {k: (z[k].astype(np.float32).ravel().tolist(), list(z[k].shape)) for k in z.files}
        under = child.under_memcheck("numpy", "MNN") if memcheck else {}
        self.s.step(child.run_function(f"MNN {mode} {model.name}{' under valgrind' if memcheck else ''}",
                                       "runpy:run_path", path_name=str(script), init_globals=glb, **under,
                                       shown=f"python {script.name}  # MODE={mode}, on {model.name}"),
                    produces=[out])
        return Outputs.load(case, out, f"MNN {self.version()} ({mode})")

    def run_session(self, model: Path, case: str | None = None, cpu: str | None = None,
                    precision: str = "normal") -> Outputs:
        """The same with MNN's Session API (Interpreter, createSession, resizeSession, runSession)."""
        case = case or model.name.split(".")[0]
        out = self.s.path(f"{model.stem}.session-out.npz")
        meta = self.s.artifacts.case(case)
        where, label = self._where(cpu, precision)
        self.s.step(child.run_function(f"MNN session {model.name}{label}", "kb.workers.mnn:session", model=str(model),
                                       feed=str(self.s.artifacts.inputs(case)), out=str(out), outputs=meta["outputs"],
                                       precision=precision, **where,
                                       shown=f"MNN.Interpreter({model.name!r}).createSession() ... runSession(){label}"),
                    produces=[out])
        return Outputs.load(case, out, f"MNN {self.version()} session{label}")
