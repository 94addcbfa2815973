"""Exact versions of the engines and tools, read from package metadata without importing them."""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from functools import cache

from packaging.version import InvalidVersion, Version

from kb.engines import ENGINES

# Name -> the distribution that carries it: the engines on PyPI, and the exporter side.
DISTRIBUTIONS = {**{e.name: e.distribution for e in ENGINES.values() if e.distribution},
                 "torch": "torch", "onnx": "onnx"}


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


def version_key(v: str):
    """Release order when the version parses; text order, after every real version, otherwise."""
    try:
        return (0, Version(v), "")
    except InvalidVersion:
        return (1, Version("0"), v)


def sort_versions(versions) -> list[str]:
    return sorted(set(versions), key=version_key)


def platform_tag() -> str:
    return f"{platform.system()}-{platform.machine()} ({sys.implementation.name} {platform.python_version()})"
