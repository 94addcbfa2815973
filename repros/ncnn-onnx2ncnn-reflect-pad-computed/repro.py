"""KB125: torch's TorchScript exporter (dynamo=False) writes F.pad(mode="reflect") with its pads computed by
ConstantOfShape, Concat, Reshape, Slice, Transpose, Reshape and Cast nodes; onnx2ncnn does not fold them, reads
the Pad's pads from a tensor it does not have (an empty list) and dies of SIGSEGV."""

from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])


class PadConv1d(nn.Module):
    """EnCodec's SConv1d without its norm: F.pad(x, pads, mode), then a Conv1d (pad_mode="reflect" by default)."""

    def __init__(self, pads=(3, 3), mode="reflect", k=7):
        super().__init__()
        self.pads, self.mode = pads, mode
        self.conv = nn.Conv1d(4, 4, k)

    def forward(self, x):
        return self.conv(nn.functional.pad(x, self.pads, mode=self.mode))


class PadConv2d(nn.Module):
    """nn.ReflectionPad2d / ReplicationPad2d / ZeroPad2d, then a 3x3 Conv2d (style-transfer and GAN generators)."""

    def __init__(self, pad=nn.ReflectionPad2d):
        super().__init__()
        self.pad, self.conv = pad(1), nn.Conv2d(4, 4, 3)

    def forward(self, x):
        return self.conv(self.pad(x))


def cases():
    x = randn(1, 4, 16)
    yield Case("reflect-conv1d", seeded(PadConv1d), (x,), opset=13, dynamo=False, ways=True, **IO)
    # Workarounds: the same module and input, run through onnx-simplifier, or exported with dynamo=True.
    yield Case("onnxsim", seeded(PadConv1d), (x,), opset=13, dynamo=False, simplify=True, trigger=False,
               rewrites="reflect-conv1d", **IO)
    yield Case("dynamo", seeded(PadConv1d), (x,), opset=18, dynamo=True, export_kwargs={"external_data": False},
               trigger=False, rewrites="reflect-conv1d", **IO)


def variants():
    x1, x2 = randn(1, 4, 16, seed=2), randn(1, 4, 8, 8, seed=2)
    yield Case("reflect-asymmetric", seeded(PadConv1d, (5, 1)), (x1,), opset=13, dynamo=False, **IO)
    yield Case("replicate-conv1d", seeded(PadConv1d, (3, 3), "replicate"), (x1,), opset=13, dynamo=False, **IO)
    yield Case("reflection-pad2d", seeded(PadConv2d), (x2,), opset=13, dynamo=False, **IO)
    yield Case("replication-pad2d", seeded(PadConv2d, nn.ReplicationPad2d), (x2,), opset=17, dynamo=False, **IO)
    yield Case("zero-pad2d", seeded(PadConv2d, nn.ZeroPad2d), (x2,), opset=13, dynamo=False, **IO)
    yield Case("reflect-opset10", seeded(PadConv1d), (x1,), opset=10, dynamo=False, **IO)
