"""torch's own op samples as conformance cases for pnnx's TorchScript front end (the `pnnx-torch` path).

ONNX's node tests say how an ONNX op converts; most pnnx users start from TorchScript, where pnnx meets torch's
own ops (torch.roll, F.pad, Tensor.masked_fill) and leaves the ones no pass converts in the .ncnn.param under
those names. The cases are torch's OpInfo samples (torch.testing's op database, in every torch wheel): per op,
the first SAMPLES float32 samples whose input an ncnn Mat can hold, each traced into a module that calls the op
on that input, its other operands held as constants, as a model holds its weights. The reference is torch's own
output. Written once per torch release under $KB_CACHE/conform/torch-<version>/, in kb.conform's layout.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np

from kb.conformance import MODEL_FILE

SAMPLES = 2  # per op: enough to tell an op pnnx leaves unconverted from one it converts for some arguments only
MAX_RANK = 4  # an ncnn Mat holds 4 axes besides a batch of 1
# Ops no model converts: samplers, constructors without a tensor input, linear algebra and FFTs with no ncnn
# layer at all, sparse, jiterator (CUDA), dunder aliases of other ops, masked.* (a namespace of mask variants).
SKIP = re.compile(r"^(__|_|jiterator|sparse\.|masked\.|signal\.|linalg\.|fft\.|special\.|H$|T$|mH$|mT$)")
RANDOM = {"bernoulli", "cauchy", "exponential", "geometric", "log_normal", "normal", "uniform", "multinomial",
          "rand_like", "randn_like", "randint_like", "randint", "nn.functional.dropout", "nn.functional.dropout2d",
          "nn.functional.dropout3d", "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout",
          "nn.functional.rrelu", "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
          "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided",
          "pca_lowrank", "svd_lowrank"}


def title(name: str) -> str:
    """The op as a model spells it and pnnx names it: F.pad, torch.roll, Tensor.masked_fill."""
    import torch

    if name.startswith("nn.functional."):
        return "F." + name.removeprefix("nn.functional.")
    return f"torch.{name}" if hasattr(torch, name) else f"Tensor.{name}"


def _shown(v) -> str:
    import torch

    if isinstance(v, torch.Tensor):
        return f"tensor[{','.join(map(str, v.shape))}]" if v.dim() else f"{v.item():g}"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
        return "[" + ",".join(_shown(x) for x in v) + "]"
    return str(v).replace(" ", "")


def attrs(sample) -> str:
    """The sample's other operands, as the op page shows them: "2, dims=1"."""
    parts = [_shown(a) for a in sample.args] + [f"{k}={_shown(v)}" for k, v in sample.kwargs.items()]
    return ", ".join(parts)[:120]


def _tensors(out) -> list | None:
    """The op's outputs as tensors, or None where it gives something else (a bool, a list of shapes)."""
    import torch

    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not outs or not all(isinstance(o, torch.Tensor) and o.dtype in (torch.float32, torch.int64, torch.int32,
                                                                          torch.bool) for o in outs):
        return None
    return outs


class _Call:
    """The op applied to a model input, every other operand fixed: traced into a module."""

    def __init__(self, fn, args, kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def module(self):
        import torch

        call = self

        class M(torch.nn.Module):
            def forward(self, x):
                return call.fn(x, *call.args, **call.kwargs)

        return M().eval()


def _problem(sample) -> str | None:
    import torch

    x = sample.input
    if not isinstance(x, torch.Tensor) or x.dtype != torch.float32:
        return "its first operand is not a float32 tensor"
    if x.dim() == 0:
        return "its input is a scalar: an ncnn Mat has at least one axis"
    rank = x.dim() - (1 if x.shape[0] == 1 and x.dim() > 1 else 0)
    if rank > MAX_RANK or 0 in x.shape:
        return f"its input has shape {list(x.shape)}: an ncnn Mat holds 1 to {MAX_RANK} non-empty axes"
    return None


def _batch_of_one(sample) -> list:
    """The sample with its input cut to a batch of one first (ncnn runs one sample at a time; a conv or pool of
    a batch of 2 says nothing more), then as it is, in case the op needs the batch (its other operands' shapes)."""
    import torch

    x = sample.input
    if isinstance(x, torch.Tensor) and x.dim() >= 3 and x.shape[0] > 1:
        return [sample.__class__(x[:1].clone(), args=sample.args, kwargs=sample.kwargs), sample]
    return [sample]


def collect(root: Path, index_name: str, names: set[str] | None = None) -> None:
    """Write every case's model.pt, feed.npz and reference.npz under `root`, and the index kb.conform reads;
    `names`: only these ops of torch's database (its names: "roll", "nn.functional.pad")."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db

    torch.manual_seed(0)
    index = []
    seen: set[str] = set()
    for info in op_db:
        key = "-".join(filter(None, (info.name, info.variant_test_name)))
        if SKIP.match(info.name) or info.name in RANDOM or key in seen or (names and info.name not in names):
            continue
        if torch.float32 not in info.supported_dtypes("cpu"):
            continue
        seen.add(key)
        op = title(info.name)
        prefix = "-".join(filter(None, (op, info.variant_test_name)))
        taken = 0
        try:
            samples = list(info.sample_inputs("cpu", torch.float32, requires_grad=False))
        except Exception:  # noqa: BLE001 -- an op whose samples need what this machine lacks
            continue
        for sample in samples:
            if taken == SAMPLES:
                break
            name = f"{prefix}-{taken}"
            for one in _batch_of_one(sample):
                if not _problem(one) and (meta := _write(info, one, op, name, root / name)):
                    index.append(meta)
                    taken += 1
                    break
    tmp = root / f"{index_name}.tmp"
    tmp.write_text(json.dumps(index))
    tmp.replace(root / index_name)



def _write(info, sample, op: str, name: str, d: Path) -> dict | None:
    """Trace the op on the sample into d/model.pt with its feed and torch's reference; its index row, or None
    where the sample makes no case (not tensors out, not deterministic, not kept by tracing)."""
    import torch

    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            x = sample.input.detach().contiguous()
            ref = _tensors(info.op(x.clone(), *sample.args, **sample.kwargs))
            again = _tensors(info.op(x.clone(), *sample.args, **sample.kwargs))
            if ref is None or again is None or len(ref) != len(again) or any(
                    not torch.allclose(a.float(), b.float(), equal_nan=True) for a, b in zip(ref, again)):
                return None
            if any(r.numel() == 0 or r.dim() > MAX_RANK + 1 for r in ref):
                return None
            traced = torch.jit.trace(_Call(info.op, sample.args, sample.kwargs).module(), (x.clone(),),
                                     check_trace=False)
            got = _tensors(traced(x.clone()))
            if got is None or len(got) != len(ref) or any(
                    g.shape != r.shape or not torch.allclose(g.float(), r.float(), equal_nan=True)
                    for g, r in zip(got, ref)):
                return None  # tracing does not keep what the op does (a data-dependent branch)
            d.mkdir(parents=True, exist_ok=True)
            traced.save(str(d / MODEL_FILE["torch"]))
    except Exception:  # noqa: BLE001 -- a sample torch cannot run or trace is not a case
        return None
    np.savez(d / "feed.npz", in0=x.numpy())
    outs = {f"out{i}": r.numpy() for i, r in enumerate(ref)}
    np.savez(d / "reference.npz", **outs)
    return {"name": name, "op": op, "attrs": attrs(sample), "source": "torch",
            "inputs": [{"name": "in0", "dtype": "float32", "shape": list(x.shape), "fed": True}],
            "outputs": [{"name": k, "dtype": v.dtype.name, "shape": list(v.shape)} for k, v in outs.items()],
            "problem": None}
