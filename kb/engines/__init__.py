"""The engines a check can drive: the one registry of their names, packages and install hints.

This module is data only. The drivers (kb.engines.<name>) are imported on demand by `driver()`, so
declaring checks, building the site or validating front matter never imports a driver.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class EngineInfo:
    name: str
    driver: str  # "module:Class" of its driver, which runs it in child processes
    distribution: str | None  # the PyPI distribution that carries it; None: not on PyPI
    modules: tuple[str, ...]  # what it imports as; their presence means it is installed
    install: str  # how a user gets it
    label: str = ""  # how its own project writes its name, where not the registry name (MNN)

    @property
    def shown(self) -> str:
        return self.label or self.name

    @property
    def probe(self) -> str:
        """Python that imports it: run in a version's environment to see that the version works."""
        return "import " + ", ".join(self.modules)

    @property
    def matrix(self) -> bool:
        """`kb matrix` can vary it: pip installs any release of it."""
        return self.distribution is not None


ENGINES: dict[str, EngineInfo] = {e.name: e for e in (
    EngineInfo("mnn", "kb.engines.mnn:MNN", "MNN", ("MNN", "_tools"), "pip install MNN", "MNN"),
    EngineInfo("ncnn", "kb.engines.ncnn:NCNN", "ncnn", ("ncnn",), "pip install ncnn"),
    EngineInfo("onnxruntime", "kb.engines.onnxruntime:OnnxRuntime", "onnxruntime", ("onnxruntime",),
               "pip install onnxruntime"),
    EngineInfo("pnnx", "kb.engines.pnnx:PNNX", "pnnx", ("pnnx",), "pip install pnnx"),
    EngineInfo("onnx2ncnn", "kb.engines.onnx2ncnn:Onnx2Ncnn", None, (),
               "kb tools build onnx2ncnn (from ncnn's tools/onnx), or set ONNX2NCNN"),
)}
NAMES = tuple(ENGINES)


def driver(name: str):
    """The driver class of engine `name`."""
    module, cls = ENGINES[name].driver.split(":")
    return getattr(importlib.import_module(module), cls)


def version(name: str) -> str | None:
    return driver(name).version()


def missing(name: str) -> str | None:
    return driver(name).missing()
