"""pnnx's generated *_pnnx.py (the model rebuilt in PyTorch), run inside a child process (see kb.child)."""

from __future__ import annotations


def run(py: str, inputs: str, out: str, outputs: list[str]) -> None:
    """Import the script, build its Model() (which opens its .pnnx.bin from the working directory, the folder pnnx
    wrote it to), call forward on the inputs, save the outputs under `outputs`' names."""
    import importlib.util
    import os
    from pathlib import Path

    import numpy as np
    import torch

    os.chdir(Path(py).parent)
    spec = importlib.util.spec_from_file_location("pnnx_model", py)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    net = mod.Model().float().eval()
    with np.load(inputs) as z:
        xs = [torch.from_numpy(z[k]) for k in z.files]
    with torch.no_grad():
        ys = net(*xs)
    ys = ys if isinstance(ys, (tuple, list)) else (ys,)
    np.savez(out, **{n: y.numpy() for n, y in zip(outputs, ys)})
