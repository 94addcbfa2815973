"""ncnn: the pip runtime, running .param/.bin pairs written by a converter or by hand."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from kb import child
from kb.compare import Outputs
from kb.engines.base import Engine, Unavailable
from kb.tools import arm64
from kb.workers.ncnn import LEADING, NO_DEVICE


@functools.cache
def vulkan_device() -> str | None:
    """The name of the Vulkan device ncnn would use here (a GPU, or Mesa's lavapipe), or None."""
    # device_name() is newer than Vulkan support (ncnn 1.0.20231027 has a device but not the name)
    probe = ("import ncnn\nif ncnn.get_gpu_count():\n    info = ncnn.get_gpu_info(0)\n"
             "    print('device:', info.device_name() if hasattr(info, 'device_name') else 'unnamed')\n"
             "    ncnn.destroy_gpu_instance()")
    r = child.run_command("ncnn vulkan probe", [sys.executable, "-c", probe], timeout=120)
    found = [ln for ln in r.output.splitlines() if ln.startswith("device: ")]
    return found[-1].removeprefix("device: ").strip() if r.returncode == 0 and found else None


WARM = ("numpy", "ncnn")  # imported once by the server each run forks from (kb.forkserver)


class NCNN(Engine):
    name = "ncnn"

    def run(self, param: Path, bin: Path | None, case: str, inputs: list[str], outputs: list[str],
            batch: bool | None = None, options: dict[str, bool | int] | None = None,
            cpu: str | None = None) -> Outputs:
        """Run blobs `inputs` <- the case's inputs (in order); read blobs `outputs` as its outputs.

        Whether a blob has a batch axis depends on who wrote the .param:
        - pnnx (`batch=None` or `True`): as pnnx's own *_ncnn.py feeds each input and reads each
          output (kb.engines.pnnx.feeding): some keep the leading 1, others squeeze it. Guessing
          wrong runs silently wrong or crashes, so the script decides, blob by blob.
        - classic ncnn models (onnx2ncnn, hand-written; `batch=None` or `False`): no batch axis, a
          leading 1 is dropped.
        - `batch=True` for a .param pnnx did not write: every input is fed as it is.

        `options`: ncnn.Option fields to set before loading (e.g. {"use_fp16_storage": False}); ncnn's own
        defaults otherwise, as a user's program has them. `use_vulkan_compute=True` runs on the Vulkan
        device, and raises Unavailable where there is none (ncnn would quietly run on the CPU).

        `cpu`: run on an emulated arm64 CPU of that qemu model (cortex-a72: ARMv8.0; cortex-a76: ARMv8.2 with
        fp16 arithmetic) with ncnn's aarch64 wheel of this version (kb.tools.arm64), whose ARM kernels x86
        never runs; Unavailable where that is not set up.
        """
        from kb.engines.pnnx import feeding

        if (options or {}).get("use_vulkan_compute") and vulkan_device() is None:
            raise Unavailable(f"{NO_DEVICE} (Mesa's software one: apt-get install mesa-vulkan-drivers)")

        pnnx = feeding(param) if batch is not False else None
        if pnnx is not None:
            axes_in = [pnnx.inputs.get(b) for b in inputs]
            axes_out = [pnnx.outputs.get(b) for b in outputs]
        else:
            axes_in = [None if batch else LEADING] * len(inputs)
            axes_out = [LEADING] * len(outputs)
        emulated = arm64.runner(cpu, "ncnn", self.version()) if cpu else {}
        out = self.s.path(f"{param.stem}.ncnn-out.npz")
        case_outputs = list(self.s.artifacts.reference(case).arrays)
        where = f" on an emulated {cpu}" if cpu else ""
        self.s.step(child.run_function(f"ncnn run {param.name}{where}", "kb.workers.ncnn:run",
                                       preload=WARM, **emulated,
                                       param=str(param), bin=str(bin) if bin else None,
                                       feed=str(self.s.artifacts.inputs(case)), out=str(out),
                                       blobs_in=inputs, blobs_out=dict(zip(outputs, case_outputs)),
                                       axes_in=axes_in, axes_out=axes_out, options=options or {}),
                    produces=[out])
        return Outputs.load(case, out, f"ncnn {self.version()}{where}")

    def feed(self, param: Path, bin: Path, case: str, how: str, shown: str) -> Outputs:
        """A hand-written feed: the entry's own `test_checks:feed(param, bin, inputs, out, how)`, run in a child,
        for a check about how a program hands its data to ncnn (what `run` does right)."""
        out = self.s.path(f"{case}-{how}.npz")
        self.s.step(child.run_function(f"ncnn feed {how}", "test_checks:feed", cwd=self.s.entry.dir, param=str(param),
                                       bin=str(bin), inputs=str(self.s.artifacts.inputs(case)), out=str(out), how=how,
                                       shown=shown), produces=[out])
        return Outputs.load(case, out, f"ncnn {self.version()}")

    def write_param(self, name: str, text: str) -> Path:
        """A hand-written .param (weightless layers only), e.g. what a converter is known to emit."""
        path = self.s.path(name)
        path.write_text(text.strip() + "\n")
        return path
