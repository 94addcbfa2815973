"""YAML as kb reads and writes it: libyaml's C loader and dumper where PyYAML has them (a pure-Python parse of a
ledger took 70 ms), its Python ones otherwise."""

from __future__ import annotations

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def load(text: str):
    return yaml.load(text, Loader=LOADER)
