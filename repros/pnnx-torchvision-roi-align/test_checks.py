import importlib.util
from pathlib import Path

import numpy as np
import torch

from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)


def _repro():
    """repro.py (its stand-in torchvision::roi_align, registered once per process, and the model's weights)."""
    spec = importlib.util.spec_from_file_location("kb_roi_align_repro", Path(__file__).with_name("repro.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@checks.workaround("pnnx", "split-at-roi-pooling", needs=["ncnn"], atol=1e-3)
def backbone_then_roi_align(s):
    """The model cut before the RoI pooling (Head(how="backbone"), the same weights, traced), through pnnx / ncnn;
    RoIAlign of the same proposals on ncnn's feature map, then the box head (the same 1x1 conv) in the application;
    compared with the original roi-head model's torch output."""
    from kb.engines.pnnx import convert_step

    repro = _repro()
    model = repro.seeded(repro.Head)  # the roi-head case's weights
    backbone = repro.seeded(repro.Head, how="backbone")
    x = torch.from_numpy(np.load(s.artifacts.inputs("split"))["in0"])
    work = s.path("backbone")
    work.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        torch.jit.trace(backbone, (x,)).save(str(work / "backbone-src.pt"))
    step, param, bin = convert_step(work / "backbone-src.pt", s.path("pnnx-backbone"), [str(list(x.shape)).replace(" ", "")])
    s.step(step, produces=[param, bin])
    feat = s.ncnn.run(param, bin, "split", ["in0"], ["out0"]).arrays["out0"]
    with torch.no_grad():
        feat = torch.from_numpy(feat).reshape(1, *feat.shape[-3:])
        pooled = torch.ops.torchvision.roi_align(feat, repro.ROIS, model.scale, model.out, model.out, model.sr,
                                                 model.aligned)
        out = model.head(pooled).numpy()
    return Outputs("split", {"out0": out}, "ncnn backbone + RoIAlign and head in the application")
