"""The engine paths a check can run, named once. A check row in an entry's front matter names one (`run:`),
the case it runs on, and the path's options; a check that needs more than one path, or steps of its own,
is a function in the entry's test_checks.py instead.

Each path's steps are the engine drivers' (kb.engines), each in a child process; this module imports
none of them: a row is read without running anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Pipeline:
    name: str
    engine: str  # the engine it measures: whose release a record of it is filed under, unless the row says
    needs: tuple[str, ...]  # every engine it drives
    doc: str
    options: dict[str, str] = field(default_factory=dict)  # option -> what it sets
    call: Callable = None  # (session, case, **options) -> the engine's outputs
    required: tuple[str, ...] = ()  # options a row must set
    refuse: Callable = None  # (the row's options) -> why they are wrong, or ""


def _onnx2ncnn(s, case, inputs=None, outputs=None, batch=None, options=None, cpu=None):
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    meta = s.artifacts.case(case)  # onnx2ncnn names the blobs as the ONNX graph names its inputs and outputs
    inputs, outputs = inputs or list(meta["inputs"]), outputs or list(meta["outputs"])
    return s.ncnn.run(param, bin, case, list(inputs), list(outputs), batch=batch, options=options, cpu=cpu)


def _pnnx(s, case, source=None, inputs=None, outputs=None, fp16=None, batch=None, options=None, cpu=None, flags=()):
    meta = s.artifacts.case(case)  # pnnx names the blobs in0, in1... and out0, out1... in the model's order
    source = source or ("torchscript" if meta.get("torchscript") else "onnx")
    model = s.artifacts.torchscript(case) if source == "torchscript" else s.artifacts.onnx(case)
    param, bin = s.pnnx.convert(model, case, fp16=fp16, flags=flags)
    inputs = inputs or [f"in{i}" for i in range(len(meta["inputs"]))]
    outputs = outputs or [f"out{i}" for i in range(len(meta["outputs"]))]
    return s.ncnn.run(param, bin, case, list(inputs), list(outputs), batch=batch, options=options, cpu=cpu)


# pnnx's own key=value options; those kb sets itself are not a row's to set
_PNNX_FLAG = re.compile(r"(?!(?:inputshape|ncnnparam|ncnnbin|ncnnpy|fp16)=)\w+=\S*")


def _pnnx_refuse(opts: dict) -> str:
    bad = [f for f in opts.get("flags", ()) if not _PNNX_FLAG.fullmatch(f)]
    return f"pnnx flags are key=value options kb does not set itself: {', '.join(bad)}" if bad else ""


def _mnn(s, case, flags=(), cpu=None, precision="normal"):
    return s.mnn.run(s.mnn.convert(case, *flags), cpu=cpu, precision=precision)


def _mnn_session(s, case, flags=(), cpu=None, precision="normal"):
    return s.mnn.run_session(s.mnn.convert(case, *flags), cpu=cpu, precision=precision)


def _mnn_script(s, case, script, mode, flags=(), lists=False, memcheck=False):
    return s.mnn.script(case, s.entry.dir / script, mode, flags, lists, memcheck)


def _mnnquant(s, case, method="KL", samples=4, flags=(), cpu=None, precision="normal"):
    model = s.mnn.convert(case, *flags, tag="-".join(f.strip("-") for f in flags))
    config = s.mnn.sequence_calibration(case, method, samples=samples)
    return s.mnn.run(s.mnn.quantize(model, config, name=f"{model.stem}.{method}.mnn"), case, cpu=cpu,
                     precision=precision)


def _onnxruntime(s, case):
    return s.onnxruntime.run(s.artifacts.onnx(case), case)


_NCNN = {"inputs": "ncnn input blob names, in the case's input order (default: the ONNX graph's input names)",
         "outputs": "ncnn output blob names, in the case's output order (default: the ONNX graph's output names)",
         "batch": "true: feed every input as it is, for a .param pnnx's script does not describe; false: drop a "
                  "leading 1 (default: as pnnx's script feeds it, else drop it)",
         "options": "ncnn.Option fields set before loading, e.g. {use_fp16_arithmetic: false}",
         "cpu": "ncnn's aarch64 wheel on an emulated arm64 CPU (cortex-a72: ARMv8.0, cortex-a76: ARMv8.2)"}
_MNN = {"flags": "mnnconvert options, e.g. [--optimizeLevel, '0']",
        "cpu": "an emulated arm64 CPU (qemu model: cortex-a72 is ARMv8.0, cortex-a76 ARMv8.2 with fp16)",
        "precision": "MNN's precision mode: normal (default), low (fp16 arithmetic where the CPU has it), high, "
                     "low_bf16 (Precision_Low_BF16: bf16 where MNN is built with MNN_SUPPORT_BF16, else fp32)"}

PIPELINES = {p.name: p for p in (
    Pipeline("onnx2ncnn", "onnx2ncnn", ("onnx2ncnn", "ncnn"),
             "onnx2ncnn on the case's ONNX, then the .param and .bin on ncnn", _NCNN, _onnx2ncnn),
    Pipeline("pnnx", "pnnx", ("pnnx", "ncnn"),
             "pnnx on the case's traced TorchScript (or its ONNX), then ncnn, fed as pnnx's own script feeds it",
             {"source": "torchscript or onnx (default: torchscript where the case is traced too, else onnx)",
              "fp16": "pnnx's fp16= (weights stored as fp16; default pnnx's own, on)",
              "flags": "more of pnnx's key=value options, e.g. [optlevel=0]", **_NCNN, "inputs": "ncnn input blob names (default: pnnx's, in0, in1... one per "
              "input of the case)", "outputs": "ncnn output blob names (default: pnnx's, out0, out1...)"}, _pnnx,
             refuse=_pnnx_refuse),
    Pipeline("mnn", "mnn", ("mnn",), "mnnconvert on the case's ONNX, then MNN's Module API", _MNN, _mnn),
    Pipeline("mnn-session", "mnn", ("mnn",), "mnnconvert on the case's ONNX, then MNN's Session API", _MNN,
             _mnn_session),
    Pipeline("mnn-script", "mnn", ("mnn",), "mnnconvert on the case's ONNX, then a script of the entry (the user's "
             "own MNN Python code) in a fresh Python, which saves the outputs (kb.engines.mnn.MNN.script)",
             {"script": "the script, a file in the entry's folder, run by runpy with the globals MODEL, FEED, OUTPUTS, "
                        "OUT and MODE", "mode": "MODE: what the script does this time",
              "flags": _MNN["flags"], "lists": "true: INPUTS too, the inputs as Python lists (for code run without "
                                               "numpy)",
              "memcheck": "true: run the script under valgrind's memcheck (a read or write outside a heap block is seen "
                          "every time, where a crash from it depends on the heap's layout)"},
             _mnn_script, ("script", "mode")),
    Pipeline("mnnquant", "mnn", ("mnn",), "mnnconvert on the case's ONNX, then mnnquant (offline int8, calibrated on the "
             "case's input and seeded normals, MNN's \"sequence\" layout), then MNN's Module API",
             {**_MNN, "method": "mnnquant's feature_quantize_method: KL (default), EMA or ADMM",
              "samples": "calibration samples (default 4): the case's own input, then seeded normals"}, _mnnquant),
    Pipeline("onnxruntime", "onnxruntime", ("onnxruntime",), "onnxruntime on the case's ONNX", {}, _onnxruntime),
)}
