"""The engines a check can drive. Each module runs its engine only in child processes."""

from __future__ import annotations

from kb.engines.base import Engine
from kb.engines.mnn import MNN
from kb.engines.ncnn import NCNN
from kb.engines.onnx2ncnn import Onnx2Ncnn
from kb.engines.onnxruntime import OnnxRuntime
from kb.engines.pnnx import PNNX

ALL: dict[str, type[Engine]] = {e.name: e for e in (MNN, NCNN, OnnxRuntime, PNNX, Onnx2Ncnn)}


def version(name: str) -> str | None:
    return ALL[name].version()
