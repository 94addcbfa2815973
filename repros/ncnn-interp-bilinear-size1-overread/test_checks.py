"""KB232: ncnn's bilinear Interp on an input one pixel wide (or high) reads before the input's memory.

Two ways to see the read: valgrind's memcheck reports it deterministically ("Invalid read of size 32", the pack-8
row before the 1x1 map) where the values read vary from run to run and process to process; and, where the input
of the Interp is the model's own input in 3 channels (ncnn keeps it unpacked and reads the caller's buffer), a NaN
put just before that buffer reaches the output every time."""

import importlib.util
from pathlib import Path

from kb import child
from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)
_spec = importlib.util.spec_from_file_location("kb232_user_program", Path(__file__).with_name("user_program.py"))
program = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(program)

ATOL = 1e-3  # pnnx writes the weights as fp16 by default


def looped(s, param: Path, bin: Path, case: str, runs: int = 2, lightmode: bool = True) -> Outputs:
    """A child runs user_program.loop() on the converted model under valgrind (memcheck: reads and writes outside
    a block only, which make it exit 99). The input goes in as raw float32 (numpy is not imported there)."""
    import numpy as np

    memcheck = child.under_memcheck("ncnn")  # a warm valgrind Python with ncnn (not numpy) imported forks each run
    with np.load(s.artifacts.inputs(case)) as z:
        x = np.ascontiguousarray(z["in0"][0], dtype=np.float32)
    raw = s.path(f"{case}.in0.f32")
    raw.write_bytes(x.tobytes())
    how = "" if lightmode else ", lightmode off"
    out = s.path(f"{param.stem}-loop{'' if lightmode else '-lightmode-off'}.npz")
    s.step(child.run_function(f"ncnn loop {runs} runs{how} under valgrind", "user_program:loop", cwd=s.entry.dir,
                              **memcheck, param=str(param),
                              bin=str(bin), raw=str(raw), shape=list(x.shape), out=str(out), runs=runs,
                              lightmode=lightmode), produces=[out])
    return Outputs.load(case, out, f"ncnn {s.ncnn.version()} under valgrind")


def nan_before(s, param: Path, bin: Path, case: str) -> Outputs:
    """A child runs user_program.nan_before(): the input handed to ncnn in place, after 16 NaN floats."""
    out = s.path(f"{param.stem}-nan-before.npz")
    s.step(child.run_function("ncnn feed after NaN", "user_program:nan_before", cwd=s.entry.dir, param=str(param),
                              bin=str(bin), inputs=str(s.artifacts.inputs(case)), out=str(out)), produces=[out])
    return Outputs.load(case, out, f"ncnn {s.ncnn.version()}")


def pnnx(s, case: str):
    return s.pnnx.convert(s.artifacts.torchscript(case), case)


def onnx2ncnn(s, case: str):
    return s.onnx2ncnn.convert(s.artifacts.onnx(case))


@checks.bug("ncnn", ["outside-read"], needs=["pnnx"], atol=ATOL)
def aspp_loop(s):
    """The DeepLabV3+ of repro.py by pnnx, run twice in one Net under valgrind."""
    return looped(s, *pnnx(s, "aspp"), "aspp")


@checks.bug("ncnn", ["outside-read"], needs=["pnnx"], atol=ATOL)
def aspp_loop_lightmode_off(s):
    """The pnnx model run twice with opt.lightmode = False (intermediate blobs kept, not recycled) under valgrind."""
    return looped(s, *pnnx(s, "aspp"), "aspp", lightmode=False)


@checks.bug("ncnn", ["nan-before-input"], needs=["pnnx"])
def global_feature(s):
    """The global feature's resize alone (3 channels, 1x1 -> 8x8), fed from a buffer with NaN before it."""
    return nan_before(s, *pnnx(s, "global-feature"), "global-feature")


@checks.bug("ncnn", ["nan-before-input"], needs=["onnx2ncnn"])
def global_feature_onnx2ncnn(s):
    """The same resize by onnx2ncnn, fed the same way."""
    return nan_before(s, *onnx2ncnn(s, "global-feature"), "global-feature")


@checks.variants("ncnn", ["nan-before-input"], needs=["pnnx"])
def resize_shapes(s, case):
    """pnnx, fed from a buffer with NaN before the input."""
    return nan_before(s, *pnnx(s, case), case)


@checks.workaround("ncnn", "nearest-for-1x1", needs=["pnnx"], atol=ATOL)
def aspp_nearest_loop(s):
    """The DeepLabV3+ with the global feature resized by mode='nearest', run twice under valgrind."""
    return looped(s, *pnnx(s, "aspp-nearest"), "aspp-nearest")


@checks.workaround("ncnn", "nearest-for-1x1", needs=["pnnx"])
def global_feature_nearest(s):
    """The global feature's resize by mode='nearest', fed from a buffer with NaN before it."""
    return nan_before(s, *pnnx(s, "global-feature-nearest"), "global-feature-nearest")
