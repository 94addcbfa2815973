"""Exact versions of the engines and tools, read from package metadata without importing them."""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from functools import cache

# Engine name -> the distribution that carries it.
DISTRIBUTIONS = {
    "mnn": "MNN",
    "ncnn": "ncnn",
    "pnnx": "pnnx",
    "onnxruntime": "onnxruntime",
    "torch": "torch",
    "onnx": "onnx",
}


@cache
def of(name: str) -> str | None:
    try:
        return importlib.metadata.version(DISTRIBUTIONS.get(name, name))
    except importlib.metadata.PackageNotFoundError:
        return None


def environment() -> dict[str, str]:
    found = {name: of(name) for name in DISTRIBUTIONS}
    found["python"] = platform.python_version()
    return {k: v for k, v in found.items() if v}


def platform_tag() -> str:
    return f"{platform.system()}-{platform.machine()} ({sys.implementation.name} {platform.python_version()})"
