"""known-bug: a 5-D tensor that is only padded (nn.ReflectionPad3d, ReplicationPad3d, a zero pad): pnnx writes a
correct Padding layer, but the *_ncnn.py it writes feeds the 5-D input with batch_index=233, and ncnn's Python
Mat takes at most 4 dims."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import padding_inputs, seeded
from kb.export import Case


class Pad(nn.Module):
    """One padding op on a 5-D tensor, then a scale (so the output is not the padding's own blob)."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.pad = {"reflect3d": nn.ReflectionPad3d(1), "replicate3d": nn.ReplicationPad3d(1)}.get(kind)

    def forward(self, x):
        if self.pad is not None:
            y = self.pad(x)
        elif self.kind == "reflect3d-hw":  # a 5-D tensor padded on H and W only
            y = F.pad(x, (1, 1, 2, 2, 0, 0), mode="reflect")
        elif self.kind == "constant3d":  # zero padding of a 5-D tensor: the mode does not matter
            y = F.pad(x, (1, 1, 1, 1, 1, 1))
        else:
            raise ValueError(self.kind)
        return y * 2


class Conv3d(nn.Module):
    """Near miss: a Conv3d with padding_mode, after which pnnx gives the blob its batch axis."""

    def __init__(self, mode):
        super().__init__()
        self.conv = nn.Conv3d(2, 3, 3, padding=1, padding_mode=mode)

    def forward(self, x):
        return torch.relu(self.conv(x))


def cases():
    _, _, x3 = padding_inputs()  # the family's inputs, as the ledger measured them
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("reflpad3d", Pad("reflect3d"), (x3,), opset=13, dynamo=False, torchscript=True, **io)


def variant(name, module, x, opset=13, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    # Drawn in this order (x1, x2 unused), as when these variants were measured in KB043.
    _, _, x3 = padding_inputs(seed=1)
    yield variant("reflpad3d-opset13", Pad("reflect3d"), x3)
    yield variant("reflpad3d-opset17", Pad("reflect3d"), x3, opset=17)
    yield variant("reflpad3d-dynamo", Pad("reflect3d"), x3, opset=18, dynamo=True,
                  export_kwargs={"external_data": False})
    yield variant("reflpad3d-onnxsim", Pad("reflect3d"), x3, simplify=True)
    yield variant("replpad3d", Pad("replicate3d"), x3)
    yield variant("reflect3d-hw", Pad("reflect3d-hw"), x3)
    yield variant("conv3d-reflect", seeded(lambda: Conv3d("reflect")), x3)
    yield variant("constant3d", Pad("constant3d"), x3)
