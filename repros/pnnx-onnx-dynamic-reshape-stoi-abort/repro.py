"""KB186: a reshape whose target holds a size read from the input's shape (x.reshape(b, c, h * w), an attention's
reshape(-1, N, heads, d)), exported to ONNX with dynamic axes and converted by pnnx with inputshape2=: pnnx aborts in
pass_ncnn, "terminate called after throwing an instance of 'std::invalid_argument' what(): stoi"."""

import torch
from torch import nn
from torch.onnx.operators import reshape_from_tensor_shape, shape_as_tensor

from kb.blocks import randn, seeded
from kb.export import Case

# Height and width dynamic, as an OCR recogniser's or a detector's input is; pnnx is given a wider second shape.
DYNAMIC = {"dynamic_axes": {"in0": {2: "h", 3: "w"}}}


class ReshapeFromShape(nn.Module):
    """A conv, then the reshape `op`, whose target is built from the conv output's shape."""

    def __init__(self, op="attention"):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, 1, 1)
        self.op = op

    def forward(self, x):
        y, op = self.conv(x), self.op
        b, c, h, w = y.shape
        if op == "attention":  # SVTR / ViT self-attention over the h * w tokens, two heads
            t = y.flatten(2).transpose(1, 2)
            n = t.shape[1]
            q = t.reshape(-1, n, 2, 4).permute(0, 2, 1, 3)
            a = (q @ q.transpose(-1, -2)).softmax(-1)
            return (a @ q).permute(0, 2, 1, 3).reshape(-1, n, 8)
        if op == "tokens":
            return y.reshape(b, c, h * w)
        if op == "tokens-and-back":
            return (y.reshape(b, c, h * w) * 2).reshape(b, c, h, w)
        if op == "groups":  # channels into groups, as a channel shuffle or a group norm writes it
            return y.reshape(b, 2, 4, h, w).transpose(1, 2).reshape(b, c, h, w)
        if op == "unflatten":
            return (y.flatten(2) * 2).unflatten(2, (h, w))
        # Near misses: targets that pnnx 20261020 writes without aborting.
        if op == "rows":  # one reshape, the width kept last
            return y.reshape(b, c * h, w).relu()
        if op == "same-shape":
            return y.view(b, c, h, w).relu()
        if op == "tokens-back-batch-free":  # SVTR's mixer: tokens back to the map, reshape(-1, c, h, w)
            return (y.flatten(2).transpose(1, 2) * 2).transpose(1, 2).reshape(-1, c, h, w)
        raise ValueError(op)


class Regrid(nn.Module):
    """SVTR's neck (PP-OCR recognition): conv features to tokens, a Linear, then the tokens cut into one sequence
    per row, (-1, W, C), by the features' own shape read as a tensor and sliced (sh[3:4], sh[1:2]), as Paddle's
    export writes z.reshape([0, H, W, C]) and torch's opset-9 export writes a tensor's sizes."""

    def __init__(self):
        super().__init__()
        self.conv, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.Linear(8, 8)

    def forward(self, x):
        f = self.conv(x)
        sh = shape_as_tensor(f)
        return reshape_from_tensor_shape(self.fc(f.flatten(2).transpose(1, 2)), torch.cat([torch.tensor([-1]), sh[3:4], sh[1:2]]))


class Indexed(Regrid):
    """The same rows, the sizes read as Python ints (torch writes Shape, Gather, Unsqueeze)."""

    def forward(self, x):
        f = self.conv(x)
        _, c, _, w = f.shape
        return self.fc(f.flatten(2).transpose(1, 2)).reshape(-1, w, c)


def without_steps(model):
    """A Slice of a Shape without its optional steps input, as Paddle's exporter writes it (torch's opset 10+
    export states steps = [1])."""
    shapes = {n.output[0] for n in model.graph.node if n.op_type == "Shape"}
    for node in model.graph.node:
        if node.op_type == "Slice" and node.input[0] in shapes and len(node.input) == 5:
            del node.input[4]


WIDTH = dict(input_names=["in0"], output_names=["out0"], dynamo=False, export_kwargs={"dynamic_axes": {"in0": {3: "w"}}})


def cases():
    x = randn(1, 3, 8, 16)
    # The rows target read from the shape below opset 13 (Gather, Unsqueeze with attribute axes), or sliced from it
    # without steps as Paddle's export writes it: the same abort. At opset 13, with steps, it converts.
    yield Case("rows-opset9", seeded(Regrid), (x,), opset=9, **WIDTH)
    yield Case("rows-paddle-slice", seeded(Regrid), (x,), opset=13, edit=without_steps, **WIDTH)
    yield Case("attention", seeded(ReshapeFromShape), (x,), opset=13, dynamo=False, torchscript=True,
               export_kwargs=DYNAMIC)


def variants():
    x = randn(1, 3, 8, 16, seed=2)
    yield Case("attention-opset17", seeded(ReshapeFromShape, seed=2), (x,), opset=17, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("tokens", seeded(ReshapeFromShape, "tokens", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("tokens-and-back", seeded(ReshapeFromShape, "tokens-and-back", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("groups", seeded(ReshapeFromShape, "groups", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("unflatten", seeded(ReshapeFromShape, "unflatten", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("rows-near-miss", seeded(ReshapeFromShape, "rows", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("same-shape-near-miss", seeded(ReshapeFromShape, "same-shape", seed=2), (x,), opset=13, dynamo=False,
               export_kwargs=DYNAMIC)
    yield Case("rows-paddle-slice-opset17", seeded(Regrid, seed=2), (x,), opset=17, edit=without_steps, **WIDTH)
    yield Case("indexed-shape-opset11", seeded(Indexed, seed=2), (x,), opset=11, **WIDTH)
    yield Case("rows-opset13-near-miss", seeded(Regrid, seed=2), (x,), opset=13, **WIDTH)
    yield Case("indexed-shape-opset13-near-miss", seeded(Indexed, seed=2), (x,), opset=13, **WIDTH)
    yield Case("tokens-back-batch-free-near-miss", seeded(ReshapeFromShape, "tokens-back-batch-free", seed=2), (x,),
               opset=13, dynamo=False, export_kwargs=DYNAMIC)
