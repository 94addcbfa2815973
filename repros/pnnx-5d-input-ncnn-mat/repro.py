"""known-bug: a 5-D tensor that is only padded (nn.ReflectionPad3d, ReplicationPad3d, a zero pad): pnnx writes a
correct Padding layer, but the *_ncnn.py it writes feeds the 5-D input with batch_index=233, and ncnn's Python
Mat takes at most 4 dims."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

C, L = 8, 30  # sizes of the 1-D input drawn first, kept so the inputs stay those the ledger measured


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


def seeded(make, seed=0):
    torch.manual_seed(seed)
    return make()


def cases():
    torch.manual_seed(0)
    # Drawn in this order (x1, x2 unused): these cases were measured in KB043 (pnnx-reflect-padding), with these inputs.
    _x1 = torch.randn(1, C, L)
    _x2 = torch.randn(1, 2, 12, 12)
    x3 = torch.randn(1, 2, 6, 8, 8)
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("reflpad3d", Pad("reflect3d"), (x3,), opset=13, dynamo=False, torchscript=True, **io)


def variant(name, module, x, opset=13, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(1)
    # Drawn in this order (x1, x2 unused), as when these variants were measured in KB043.
    _x1, _x2, x3 = torch.randn(1, C, L), torch.randn(1, 2, 12, 12), torch.randn(1, 2, 6, 8, 8)
    yield variant("reflpad3d-opset13", Pad("reflect3d"), x3)
    yield variant("reflpad3d-opset17", Pad("reflect3d"), x3, opset=17)
    yield variant("reflpad3d-dynamo", Pad("reflect3d"), x3, opset=18, dynamo=True,
                  export_kwargs={"external_data": False})
    yield variant("reflpad3d-onnxsim", Pad("reflect3d"), x3, simplify=True)
    yield variant("replpad3d", Pad("replicate3d"), x3)
    yield variant("reflect3d-hw", Pad("reflect3d-hw"), x3)
    yield variant("conv3d-reflect", seeded(lambda: Conv3d("reflect")), x3)
    yield variant("constant3d", Pad("constant3d"), x3)
