"""Compare an engine's outputs with a reference, with explicit tolerances."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kb.records import Metrics


@dataclass
class Outputs:
    """Named output arrays of one run of one case."""

    case: str
    arrays: dict[str, np.ndarray]
    source: str  # who computed them: "torch", "mnn", ...

    @classmethod
    def load(cls, case: str, path: Path, source: str) -> Outputs:
        with np.load(path) as z:
            return cls(case, {k: z[k] for k in z.files}, source)


@dataclass
class Comparison:
    got: Outputs
    reference: Outputs
    close: bool
    metrics: Metrics
    note: str

    def describe(self) -> str:
        m = self.metrics
        head = f"{self.got.source} vs {self.reference.source}: "
        if self.note:
            return head + self.note
        return head + (f"max abs diff {m.max_abs:.3g}, max rel diff {m.max_rel:.3g}, "
                       f"{m.nan} NaN of {m.total} (atol {m.atol:g}, rtol {m.rtol:g})")


def compare(got: Outputs, reference: Outputs, atol: float, rtol: float) -> Comparison:
    metrics = Metrics(atol=atol, rtol=rtol, max_abs=0.0, max_rel=0.0)
    close, notes = True, []
    for name, ref in reference.arrays.items():
        out = got.arrays.get(name)
        if out is None:
            return Comparison(got, reference, False, metrics, f"output {name!r} is missing")
        ref = ref.astype(np.float64)
        out = np.asarray(out, dtype=np.float64)
        if out.size == ref.size and out.shape != ref.shape:
            out = out.reshape(ref.shape)  # engines may drop or add unit dimensions
        if out.shape != ref.shape:
            notes.append(f"output {name!r} has shape {list(out.shape)}, expected {list(ref.shape)}")
            close = False
            continue
        metrics.nan += int(np.count_nonzero(~np.isfinite(out)))
        metrics.total += out.size
        diff = np.abs(out - ref)
        finite = np.isfinite(diff)
        if finite.any():
            metrics.max_abs = max(metrics.max_abs, float(diff[finite].max()))
            scale = float(np.abs(ref).max()) or 1.0
            metrics.max_rel = max(metrics.max_rel, float(diff[finite].max()) / scale)
        if not np.allclose(out, ref, atol=atol, rtol=rtol, equal_nan=False):
            close = False
    return Comparison(got, reference, close, metrics, "; ".join(notes))
