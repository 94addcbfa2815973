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
    shape_differs: bool = False  # an output's shape is not the reference's (unit axes aside)

    def describe(self) -> str:
        m = self.metrics
        head = f"{self.got.source} vs {self.reference.source}: "
        if self.note:
            return head + self.note
        tol = (f"tolerance {m.range_tol:.0%} of the output range" if m.range_tol
               else f"tolerance atol {m.atol:g}, rtol {m.rtol:g}")
        if m.nan and m.nan == m.total:
            return head + f"all {m.total} outputs are NaN or infinite"
        diffs = (f"max abs diff {m.max_abs:.3g}, max rel diff {m.max_rel:.3g}" if m.max_abs is not None
                 else "no finite outputs")
        return head + f"{diffs}, {m.nan} NaN of {m.total} ({tol})"


def compare(got: Outputs, reference: Outputs, atol: float, rtol: float, range_tol: float | None = None) -> Comparison:
    """Elementwise allclose(atol, rtol); or, with `range_tol` (for quantized models), the largest
    difference must stay within that fraction of the reference's largest magnitude, per output."""
    metrics = Metrics(atol=atol, rtol=rtol, range_tol=range_tol)
    close, notes, shape_differs = True, [], False
    for name, ref in reference.arrays.items():
        out = got.arrays.get(name)
        if out is None:
            return Comparison(got, reference, False, metrics, f"output {name!r} is missing", True)
        ref = ref.astype(np.float64)
        with np.errstate(invalid="ignore"):  # an engine's unwritten output may hold signalling NaNs: counted below
            out = np.asarray(out, dtype=np.float64)
        if out.shape != ref.shape and _squeezed(out.shape) == _squeezed(ref.shape):
            out = out.reshape(ref.shape)  # ncnn drops the batch axis, MNN may keep unit axes: only those
        if out.shape != ref.shape:
            notes.append(f"output {name!r} has shape {list(out.shape)}, expected {list(ref.shape)}")
            close, shape_differs = False, True
            continue
        same = (out == ref) | (np.isnan(out) & np.isnan(ref))  # torch's own inf or NaN, reproduced, is right
        metrics.nan += int(np.count_nonzero(~np.isfinite(out) & ~same))  # non-finite where torch is not
        metrics.total += out.size
        with np.errstate(invalid="ignore"):
            diff = np.where(same, 0.0, np.abs(out - ref))
        finite = np.isfinite(diff)
        magnitudes = np.abs(ref[np.isfinite(ref)])
        scale = float(magnitudes.max()) if magnitudes.size and magnitudes.max() else 1.0
        if finite.any():
            worst = float(diff[finite].max())
            metrics.max_abs = max(metrics.max_abs or 0.0, worst)
            metrics.max_rel = max(metrics.max_rel or 0.0, worst / scale)
        if range_tol is not None:
            worst = float(diff.max()) if diff.size else 0.0
            if not np.isfinite(diff).all() or worst > range_tol * scale:
                close = False
        elif not np.allclose(out, ref, atol=atol, rtol=rtol, equal_nan=True):
            close = False
    return Comparison(got, reference, close, metrics, "; ".join(notes), shape_differs)


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)
