"""known-bug: nn.Conv2d(padding_mode="circular") traced to TorchScript: pnnx prints "unsupported padding_mode
circular" and writes a zero-padded Convolution (Tencent/ncnn#4835's path, which was fixed for reflect)."""

import torch
from torch import nn

from kb.export import Case

C, L = 8, 30  # sizes of the 1-D input drawn first, kept so the inputs stay those the ledger measured


class Conv(nn.Module):
    """A conv with padding_mode (nn.Conv2d), as in Tencent/ncnn#4835."""

    def __init__(self, mode, k=3):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, k, padding=k // 2, padding_mode=mode)

    def forward(self, x):
        return torch.relu(self.conv(x))


def seeded(make, seed=0):
    torch.manual_seed(seed)
    return make()


def cases():
    torch.manual_seed(0)
    # Drawn in this order (x1, x3 unused): these cases were measured in KB043 (pnnx-reflect-padding), with these inputs.
    _x1 = torch.randn(1, C, L)
    x2 = torch.randn(1, 2, 12, 12)
    _x3 = torch.randn(1, 2, 6, 8, 8)
    io = dict(input_names=["in0"], output_names=["out0"])
    # Circular padding from TorchScript (ONNX has no circular Pad mode: torch writes Slice + Concat).
    circ = seeded(lambda: Conv("circular"))
    yield Case("conv-circular", circ, (x2,), opset=13, dynamo=False, torchscript=True, **io)
    # The workaround: the same model, from its ONNX export.
    yield Case("conv-circular-onnx", circ, (x2,), opset=13, dynamo=False, trigger=False, rewrites="conv-circular", **io)


def variant(name, module, x, opset=13, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(1)
    # Drawn in this order (x1, x3 unused), as when these variants were measured in KB043.
    _x1, x2, _x3 = torch.randn(1, C, L), torch.randn(1, 2, 12, 12), torch.randn(1, 2, 6, 8, 8)
    # Near misses: the padding modes #4835 reported and pnnx then learned (a87be24), on the ONNX path.
    yield variant("conv-reflect-near-miss", seeded(lambda: Conv("reflect", k=7)), x2, opset=17)
    yield variant("conv-replicate-near-miss", seeded(lambda: Conv("replicate")), x2)
