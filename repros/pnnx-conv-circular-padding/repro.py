"""known-bug: nn.Conv2d(padding_mode="circular") traced to TorchScript: pnnx prints "unsupported padding_mode
circular" and writes a zero-padded Convolution (Tencent/ncnn#4835's path, which was fixed for reflect)."""

import torch
from torch import nn

from kb.blocks import padding_inputs, seeded
from kb.export import Case


class Conv(nn.Module):
    """A conv with padding_mode (nn.Conv2d), as in Tencent/ncnn#4835."""

    def __init__(self, mode, k=3):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, k, padding=k // 2, padding_mode=mode)

    def forward(self, x):
        return torch.relu(self.conv(x))


def cases():
    _, x2, _ = padding_inputs()  # the family's inputs, as the ledger measured them
    io = dict(input_names=["in0"], output_names=["out0"])
    # Circular padding from TorchScript (ONNX has no circular Pad mode: torch writes Slice + Concat).
    circ = seeded(lambda: Conv("circular"))
    yield Case("conv-circular", circ, (x2,), opset=13, dynamo=False, torchscript=True, **io)
    # The workaround: the same model, from its ONNX export.
    yield Case("conv-circular-onnx", circ, (x2,), opset=13, dynamo=False, trigger=False, rewrites="conv-circular", **io)


def variant(name, module, x, opset=13, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    # Drawn in this order (x1, x3 unused), as when these variants were measured in KB043.
    _, x2, _ = padding_inputs(seed=1)
    # Near misses: the padding modes #4835 reported and pnnx then learned (a87be24), on the ONNX path.
    yield variant("conv-reflect-near-miss", seeded(lambda: Conv("reflect", k=7)), x2, opset=17)
    yield variant("conv-replicate-near-miss", seeded(lambda: Conv("replicate")), x2)
