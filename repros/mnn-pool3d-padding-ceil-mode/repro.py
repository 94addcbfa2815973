"""KB094: MNN's 3-D pooling (AvgPool3d / MaxPool3d). A padded AvgPool3d comes out with other values than torch's:
MNN pools height and width counting the padding and then depth without it, whatever count_include_pad says.
And ceil_mode=True is ignored: the output has the floor-mode shape."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import like, seeded
from kb.export import Case


class Net(nn.Module):
    """Conv3d -> ReLU -> a 3-D pool, as video and volumetric (medical) models use."""

    def __init__(self, kind="avg", kernel=3, stride=1, padding=1, ceil_mode=False, count_include_pad=True,
                 rewrite=None):
        super().__init__()
        self.conv = nn.Conv3d(3, 8, 3, padding=1)
        if kind == "avg":
            self.pool = nn.AvgPool3d(kernel, stride, 0 if rewrite else padding, ceil_mode=ceil_mode,
                                     count_include_pad=count_include_pad)
        else:
            self.pool = nn.MaxPool3d(kernel, stride, padding, ceil_mode=False if rewrite else ceil_mode)
        self.rewrite, self.padding = rewrite, padding

    def forward(self, x):
        y = torch.relu(self.conv(x))
        if self.rewrite == "zero-pad":  # the workaround for AvgPool3d(count_include_pad=True): pad first
            y = F.pad(y, (self.padding,) * 6)
        elif self.rewrite == "edge-pad":  # the workaround for MaxPool3d(2, 2, ceil_mode=True) on 7 x 9 x 9
            y = F.pad(y, (0, 1, 0, 1, 0, 1), mode="replicate")
        return self.pool(y)


def volume(seed=1, shape=(7, 9, 9)):
    torch.manual_seed(seed)
    return torch.randn(1, 3, *shape)


def cases():
    x = volume()
    avg = seeded(Net)
    yield Case("avgpool3d-padded", avg, (x,), ["x"], ["y"], opset=18, dynamo=True)
    zero_pad = like(avg, Net, rewrite="zero-pad")
    yield Case("avgpool3d-zero-pad", zero_pad, (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="avgpool3d-padded")
    ceil = seeded(Net, kind="max", kernel=2, stride=2, padding=0, ceil_mode=True)
    yield Case("maxpool3d-ceil", ceil, (x,), ["x"], ["y"], opset=18, dynamo=True)
    edge_pad = like(ceil, Net, kind="max", kernel=2, stride=2, padding=0, ceil_mode=True, rewrite="edge-pad")
    yield Case("maxpool3d-edge-pad", edge_pad, (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="maxpool3d-ceil")
    # Control: the same AvgPool3d without padding.
    yield Case("avgpool3d-unpadded", seeded(Net, padding=0), (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False)


def variants():
    x = volume()
    yield Case("avg-k3-s1-p1", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("avg-exclude-pad", seeded(Net, seed=3, count_include_pad=False),
               (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("avg-k3-s2-p1", seeded(Net, seed=3, stride=2), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("avg-k2-s2-p1", seeded(Net, seed=3, kernel=2, stride=2), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("avg-opset17", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=True)
    yield Case("avg-torchscript", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("avg-onnxsim", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("max-ceil", seeded(Net, seed=3, kind="max", kernel=2, stride=2, padding=0, ceil_mode=True), (x,), ["x"],
               ["y"], opset=18, dynamo=True)
    yield Case("max-ceil-k3-s2", seeded(Net, seed=3, kind="max", kernel=3, stride=2, padding=0, ceil_mode=True),
               (volume(shape=(8, 10, 10)),), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("max-ceil-torchscript", seeded(Net, seed=3, kind="max", kernel=2, stride=2, padding=0, ceil_mode=True),
               (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("avg-ceil", seeded(Net, seed=3, kernel=2, stride=2, padding=0, ceil_mode=True), (x,), ["x"], ["y"],
               opset=18, dynamo=True)
    # Near misses: an unpadded AvgPool3d, a padded MaxPool3d, a MaxPool3d without ceil_mode.
    yield Case("avg-unpadded-near-miss", seeded(Net, seed=3, kernel=2, stride=2, padding=0), (x,), ["x"], ["y"],
               opset=18, dynamo=True)
    yield Case("max-padded-near-miss", seeded(Net, seed=3, kind="max"), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("max-floor-near-miss", seeded(Net, seed=3, kind="max", kernel=2, stride=2, padding=0), (x,),
               ["x"], ["y"], opset=18, dynamo=True)
