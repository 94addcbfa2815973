"""Run by runpy in a child (globals PY, INPUTS, OUT, OUTPUTS): import pnnx's *_pnnx.py, build Model() (it opens its
.pnnx.bin from the working directory, the folder pnnx wrote it to), call forward on the inputs, save the outputs."""

import importlib.util
import os
from pathlib import Path

import numpy as np
import torch

os.chdir(Path(PY).parent)  # noqa: F821 -- set by the check
spec = importlib.util.spec_from_file_location("pnnx_model", PY)  # noqa: F821
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
net = mod.Model().float().eval()
with np.load(INPUTS) as z:  # noqa: F821
    xs = [torch.from_numpy(z[k]) for k in z.files]
with torch.no_grad():
    ys = net(*xs)
ys = ys if isinstance(ys, (tuple, list)) else (ys,)
np.savez(OUT, **{n: y.numpy() for n, y in zip(OUTPUTS, ys)})  # noqa: F821
