import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Rescale(nn.Module):
    """PicoDet's ONNX post-processing (pnnx/pnnx#181): boxes divided by the scale factor, a second input split in two."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x, scale):
        boxes = self.conv(x).flatten(2).transpose(1, 2)  # (1, 64, 4)
        sy, sx = torch.split(scale, 1, dim=-1)
        return boxes / torch.cat([sx, sy, sx, sy], -1).unsqueeze(1)


def equal_split(model):
    """Paddle2ONNX writes paddle.split(x, 2) as a Split without sizes (equal parts): drop them (opset 18 on: num_outputs)."""
    import onnx

    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    for n in model.graph.node:
        if n.op_type == "Split":
            for a in [a for a in n.attribute if a.name in ("split", "num_outputs")]:
                n.attribute.remove(a)
            del n.input[1:]
            if opset >= 18:
                n.attribute.append(onnx.helper.make_attribute("num_outputs", len(n.output)))


def cases():
    x, s = randn(1, 3, 8, 8), torch.tensor([[0.5, 0.8]])
    yield Case("equal-split", seeded(Rescale), (x, s), opset=11, dynamo=False, edit=equal_split, ways=True)
    yield Case("split-sizes", seeded(Rescale), (x, s), opset=11, dynamo=False, trigger=False, rewrites="equal-split")
