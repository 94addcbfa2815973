"""KB219: pnnx's ONNX front end and ONNX's SpaceToDepth / DepthToSpace, as tf2onnx writes them.

torch never writes these nodes so: F.pixel_unshuffle exports as Reshape-Transpose-Reshape, F.pixel_shuffle as
DepthToSpace with mode=CRD written out (opset 11+). As in KB218, the models compute TensorFlow's order (the ONNX
definitions of SpaceToDepth and of DepthToSpace in DCR mode) with reshape and permute, and `edit=` replaces that
Reshape-Transpose-Reshape by the one node tf2onnx writes (blocksize only, no mode; or the mode written out): the
same function, so torch's output stays the reference. The graph helpers are KB218's."""

import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

S2D_PERM = [0, 3, 5, 1, 2, 4]  # ONNX SpaceToDepth: reshape to (N, C, H/b, b, W/b, b), this transpose, reshape
DCR_PERM = [0, 3, 4, 1, 5, 2]  # ONNX DepthToSpace, DCR: reshape to (N, b, b, C/b^2, H, W), this transpose, reshape


def space_to_depth(t, b):
    n, c, h, w = t.shape
    return t.reshape(n, c, h // b, b, w // b, b).permute(*S2D_PERM).reshape(n, c * b * b, h // b, w // b)


def depth_to_space_dcr(t, b):
    n, c, h, w = t.shape
    return t.reshape(n, b, b, c // (b * b), h, w).permute(*DCR_PERM).reshape(n, c // (b * b), h * b, w * b)


class Passthrough(nn.Module):
    """YOLOv2's passthrough layer: a fine feature map moved to depth, concatenated with the coarse one, a conv."""

    def __init__(self):
        super().__init__()
        self.fine = nn.Conv2d(3, 4, 3, padding=1)
        self.coarse = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.head = nn.Conv2d(24, 8, 1)

    def forward(self, x):
        f = torch.relu(self.fine(x))
        return self.head(torch.cat([space_to_depth(f, 2), torch.relu(self.coarse(x))], 1))


class SrHead(nn.Module):
    """A sub-pixel upsampling head (ESPCN): a conv to 3 * r^2 channels, then depth to space in TensorFlow's order."""

    def __init__(self, r=2):
        super().__init__()
        self.r = r
        self.conv = nn.Conv2d(3, 3 * r * r, 3, padding=1)

    def forward(self, x):
        return depth_to_space_dcr(self.conv(x), self.r)


class PassthroughUnshuffle(nn.Module):
    """The workaround: the same passthrough with F.pixel_unshuffle (channel c * 4 + k, where space_to_depth gives
    k * C + c) and the head conv's input channels permuted to match: the same function."""

    def __init__(self, net):
        super().__init__()
        self.fine, self.coarse, self.head = net.fine, net.coarse, nn.Conv2d(24, 8, 1)
        c = net.fine.out_channels
        order = [k * c + i for i in range(c) for k in range(4)] + list(range(4 * c, 24))
        with torch.no_grad():
            self.head.weight.copy_(net.head.weight[:, order])
            self.head.bias.copy_(net.head.bias)

    def forward(self, x):
        f = torch.relu(self.fine(x))
        return self.head(torch.cat([F.pixel_unshuffle(f, 2), torch.relu(self.coarse(x))], 1))


class SrHeadShuffle(nn.Module):
    """The workaround: the same head with F.pixel_shuffle (CRD: channel c * r^2 + k, where DCR reads k * C + c) and
    the conv's output channels permuted to match: the same function."""

    def __init__(self, net):
        super().__init__()
        r, c = net.r, net.conv.out_channels // (net.r * net.r)
        self.r, self.conv = r, nn.Conv2d(3, c * r * r, 3, padding=1)
        order = [k * c + i for i in range(c) for k in range(r * r)]
        with torch.no_grad():
            self.conv.weight.copy_(net.conv.weight[order])
            self.conv.bias.copy_(net.conv.bias[order])

    def forward(self, x):
        return F.pixel_shuffle(self.conv(x), self.r)


def _fuse(model, op, perm, **attrs):
    """Replace each Reshape-Transpose(perm)-Reshape by one node `op` (blocksize from the first reshape's shape)."""
    g = model.graph
    made = 0
    while True:
        nodes = list(g.node)
        producer = {o: n for n in nodes for o in n.output}
        users = {}
        for n in nodes:
            for i in n.input:
                users.setdefault(i, []).append(n)
        inits = {t.name: t for t in g.initializer}
        t = next((n for n in nodes if n.op_type == "Transpose"
                  and [list(a.ints) for a in n.attribute if a.name == "perm"] == [perm]), None)
        if t is None:
            break
        first, last = producer[t.input[0]], users[t.output[0]][0]
        assert first.op_type == "Reshape" and last.op_type == "Reshape", (first.op_type, last.op_type)
        shape_src = first.input[1]
        src = inits[shape_src] if shape_src in inits else producer[shape_src].attribute[0].t
        shape = [int(v) for v in numpy_helper.to_array(src)]
        b = shape[3] if op == "SpaceToDepth" else shape[1]
        new = helper.make_node(op, [first.input[0]], [last.output[0]], name=f"{op}_{made}", blocksize=b, **attrs)
        made += 1
        at = nodes.index(first)
        kept = [n for n in nodes if n not in (first, t, last)]
        kept.insert(at, new)
        del g.node[:]
        g.node.extend(kept)
    assert made, f"no Reshape-Transpose{perm}-Reshape to replace"
    _prune(g)


def _prune(g):
    """Drop the nodes, initializers and value_info the replaced chains left unused."""
    while True:
        used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
        dead = [n for n in g.node if not any(o in used for o in n.output)]
        if not dead:
            break
        kept = [n for n in g.node if n not in dead]
        del g.node[:]
        g.node.extend(kept)
    used = {i for n in g.node for i in n.input}
    inits = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(inits)
    names = used | {o for n in g.node for o in n.output}
    info = [v for v in g.value_info if v.name in names]
    del g.value_info[:]
    g.value_info.extend(info)


def to_space_to_depth(model):
    """SpaceToDepth(blocksize), as tf2onnx writes tf.nn.space_to_depth."""
    _fuse(model, "SpaceToDepth", S2D_PERM)


def to_depth_to_space(model):
    """DepthToSpace(blocksize) with no mode, as tf2onnx writes tf.nn.depth_to_space (ONNX's default: DCR)."""
    _fuse(model, "DepthToSpace", DCR_PERM)


def to_depth_to_space_dcr(model):
    """The same node with mode="DCR" written out."""
    _fuse(model, "DepthToSpace", DCR_PERM, mode="DCR")


def cases():
    x, img = randn(1, 8, 8, 8), randn(1, 3, 16, 16)
    yield Case("space-to-depth", Fn(lambda t: space_to_depth(t, 2)), (x,), opset=13, dynamo=False,
               edit=to_space_to_depth, ways=True)
    yield Case("passthrough", seeded(Passthrough), (img,), opset=13, dynamo=False, edit=to_space_to_depth)
    yield Case("depth-to-space-no-mode", Fn(lambda t: depth_to_space_dcr(t, 2)), (x,), opset=13, dynamo=False,
               edit=to_depth_to_space, ways=True)
    yield Case("sr-head-no-mode", seeded(SrHead), (img,), opset=13, dynamo=False, edit=to_depth_to_space)
    yield Case("depth-to-space-dcr", Fn(lambda t: depth_to_space_dcr(t, 2)), (x,), opset=13, dynamo=False,
               edit=to_depth_to_space_dcr)
    # Workarounds, fed the same inputs: in torch, pixel_unshuffle / pixel_shuffle with the neighbouring conv's
    # channels permuted to match (exported as torch writes them).
    yield Case("passthrough-unshuffle", PassthroughUnshuffle(seeded(Passthrough)), (img,), opset=13, dynamo=False,
               trigger=False, rewrites="passthrough")
    yield Case("sr-head-shuffle", SrHeadShuffle(seeded(SrHead)), (img,), opset=13, dynamo=False, trigger=False,
               rewrites="sr-head-no-mode")
    # Controls: torch's own F.pixel_shuffle (DepthToSpace with mode=CRD written out) and F.pixel_unshuffle.
    yield Case("pixel-shuffle", Fn(lambda t: F.pixel_shuffle(t, 2)), (x,), opset=13, dynamo=False, trigger=False)
    yield Case("pixel-unshuffle", Fn(lambda t: F.pixel_unshuffle(t, 2)), (x,), opset=13, dynamo=False,
               trigger=False)


def variants():
    x, img = randn(1, 16, 8, 8, seed=2), randn(1, 3, 16, 16, seed=2)
    x9 = randn(1, 18, 6, 6, seed=2)
    yield Case("space-to-depth-b3", Fn(lambda t: space_to_depth(t, 3)), (randn(1, 4, 9, 9, seed=2),), opset=13,
               dynamo=False, edit=to_space_to_depth)
    yield Case("space-to-depth-b4", Fn(lambda t: space_to_depth(t, 4)), (x,), opset=13, dynamo=False,
               edit=to_space_to_depth)
    yield Case("passthrough-opset18", seeded(Passthrough, seed=3), (img,), opset=18, dynamo=False,
               edit=to_space_to_depth)
    yield Case("depth-to-space-no-mode-b3", Fn(lambda t: depth_to_space_dcr(t, 3)), (x9,), opset=13, dynamo=False,
               edit=to_depth_to_space)
    yield Case("depth-to-space-no-mode-b4", Fn(lambda t: depth_to_space_dcr(t, 4)), (randn(1, 32, 4, 4, seed=2),),
               opset=13, dynamo=False, edit=to_depth_to_space)
    yield Case("sr-head-no-mode-opset9", seeded(SrHead, seed=3), (img,), opset=9, dynamo=False,
               edit=to_depth_to_space)
    yield Case("sr-head-no-mode-r3", seeded(SrHead, r=3, seed=3), (img,), opset=13, dynamo=False,
               edit=to_depth_to_space)
    # The mode written out: DCR (as another exporter writes it) and CRD (torch's pixel_shuffle); torch's exports.
    yield Case("depth-to-space-dcr-b3", Fn(lambda t: depth_to_space_dcr(t, 3)), (x9,), opset=13, dynamo=False,
               edit=to_depth_to_space_dcr)
    yield Case("depth-to-space-dcr-b4", Fn(lambda t: depth_to_space_dcr(t, 4)), (randn(1, 32, 4, 4, seed=2),),
               opset=13, dynamo=False, edit=to_depth_to_space_dcr)
    yield Case("sr-head-dcr", seeded(SrHead, seed=3), (img,), opset=13, dynamo=False, edit=to_depth_to_space_dcr)
    yield Case("pixel-shuffle-b3", Fn(lambda t: F.pixel_shuffle(t, 3)), (x9,), opset=13, dynamo=False)
    yield Case("pixel-shuffle-b4", Fn(lambda t: F.pixel_shuffle(t, 4)), (randn(1, 32, 4, 4, seed=2),), opset=13,
               dynamo=False)
    yield Case("pixel-shuffle-crd-dynamo", Fn(lambda t: F.pixel_shuffle(t, 2)), (x,), opset=18, dynamo=True)
    yield Case("pixel-shuffle-opset9", Fn(lambda t: F.pixel_shuffle(t, 2)), (x,), opset=9, dynamo=False)
    yield Case("pixel-unshuffle-b3", Fn(lambda t: F.pixel_unshuffle(t, 3)), (randn(1, 4, 9, 9, seed=2),), opset=13,
               dynamo=False)
    yield Case("pixel-unshuffle-b4", Fn(lambda t: F.pixel_unshuffle(t, 4)), (x,), opset=13, dynamo=False)
    yield Case("pixel-unshuffle-dynamo", Fn(lambda t: F.pixel_unshuffle(t, 2)), (x,), opset=18, dynamo=True)
    # The same functions left as torch exports them, with no edit: a 6-D Reshape-Transpose-Reshape.
    yield Case("chain-space-to-depth", Fn(lambda t: space_to_depth(t, 2)), (x,), opset=13, dynamo=False)
    yield Case("chain-depth-to-space", Fn(lambda t: depth_to_space_dcr(t, 2)), (x,), opset=13, dynamo=False)
