"""KB121: pnnx drops a Reshape / Permute at the end of the graph (YOLOv5's Detect head), so ncnn's output has another shape."""

from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Detect(nn.Module):
    """YOLOv5's Detect head at export: a 1x1 conv, then view(bs, anchors, outputs, ny, nx).permute(0, 1, 3, 4, 2)."""

    def __init__(self, c=8, anchors=3, outputs=7):
        super().__init__()
        self.na, self.no = anchors, outputs
        self.m = nn.Conv2d(c, anchors * outputs, 1)

    def forward(self, x):
        y = self.m(x)
        bs, _, ny, nx = y.shape
        return y.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()


def cases():
    yield Case("detect-head", seeded(Detect), (randn(1, 8, 4, 5),), opset=17, dynamo=False, torchscript=True,
               ways=True)
