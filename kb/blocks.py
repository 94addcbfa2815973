"""Model blocks that several reproducers share, written once. An entry imports them from its repro.py; a
change here exports again every entry that imports this module (kb.artifacts keys on it).

- the helpers every reproducer wants: `seeded` weights, `like` (another model on the same weights), `randn`
  inputs, `Fn` (one function as a module);
- the fp16-range family (KB075 ncnn Vulkan, KB076 ncnn on ARM, KB077 MNN precision low), whose models are the
  same and whose engines differ;
- space to depth and depth to space in TensorFlow's order (KB218 onnx2ncnn, KB219 pnnx), and the `edit=` functions that
  put the one ONNX node tf2onnx writes in place of torch's Reshape-Transpose-Reshape;
- MobileViT's self-attention (KB233, KB240);
- the plain CNN of the fp16-arithmetic family (KB229 ncnn, KB246 MNN)."""

import math

import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper
from torch import nn

from kb.export import Case


def seeded(make, *args, seed=0, **kw):
    """`make(*args, **kw)` with torch's generator reset to `seed` first: the same weights whatever was built before.
    The arguments are built before the seed is set: a layer passed in is not seeded (`seeded(lambda: ConvThen(
    nn.Conv2d(3, 8, 1), f))` seeds it)."""
    torch.manual_seed(seed)
    return make(*args, **kw)


def like(model, make, *args, seed=0, **kw):
    """`seeded(make, ...)` with `model`'s weights: a workaround's model, the same function written another way,
    judged on the same weights."""
    other = seeded(make, *args, seed=seed, **kw)
    other.load_state_dict(model.state_dict())
    return other


def randn(*shape, seed=1):
    """A seeded normal input."""
    torch.manual_seed(seed)
    return torch.randn(*shape)


class Fn(nn.Module):
    """One function as a module, no weights: the op under test, alone."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Fc(nn.Module):
    """One nn.Linear as the whole model (its weights named fc.*): a new one, or `fc` shared with another model
    (a workaround that applies the same layer another way)."""

    def __init__(self, n_in, n_out=None, fc=None):
        super().__init__()
        self.fc = fc if fc is not None else nn.Linear(n_in, n_out)

    def forward(self, x):
        return self.fc(x)


class ConvThen(nn.Module):
    """A layer, then a function on its output: the op under test behind a real producer (whose output pnnx and
    ncnn give a known layout)."""

    def __init__(self, conv, then):
        super().__init__()
        self.conv = conv
        self.then = then

    def forward(self, x):
        return self.then(self.conv(x))


class ConvSoftmax(nn.Module):
    """A 1x1 convolution, then a softmax over `dim` (1: the channels, as a segmentation or attention-map head)."""

    def __init__(self, c_in=8, c_out=16, dim=1):
        super().__init__()
        self.conv, self.dim = nn.Conv2d(c_in, c_out, 1), dim

    def forward(self, x):
        return self.conv(x).softmax(self.dim)


def padding_inputs(seed=0):
    """The inputs of the padding family (KB043 and the entries split from it, KB044 and KB083): a 1-D (1, 8, 30),
    a 2-D (1, 2, 12, 12) and a 5-D (1, 2, 6, 8, 8) tensor, drawn in this order, as their ledgers measured."""
    torch.manual_seed(seed)
    return torch.randn(1, 8, 30), torch.randn(1, 2, 12, 12), torch.randn(1, 2, 6, 8, 8)


SCALE = 256.0  # the rescale workaround: a power of two, so dividing and multiplying back are exact
ONE_FILE = {"external_data": False}  # torch 2.13's dynamo exporter otherwise writes the weights beside the model


class L2Norm(nn.Module):
    """The length of each feature vector, as sqrt(sum(x * x)): with features of a few hundred, x * x and the sum
    pass 65504 while the result (about 900) is an ordinary number."""

    def forward(self, x):
        return torch.sqrt((x * x).sum(-1, keepdim=True))


class L2NormRescaled(nn.Module):
    """The same function, with the features divided by SCALE first and the length multiplied back: the squares
    stay under 65504."""

    def forward(self, x):
        y = x / SCALE
        return torch.sqrt((y * y).sum(-1, keepdim=True)) * SCALE


class LinalgNorm(nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(x, dim=-1, keepdim=True)


class RMSNorm(nn.Module):
    """LLaMA-style RMSNorm: x / sqrt(mean(x * x) + eps) * weight."""

    def __init__(self, d=64):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * self.weight


class ScaledSoftmax(nn.Module):
    """A classifier head with a logit scale (an inverse temperature): softmax(fc(x) * scale)."""

    def __init__(self, scale):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(16, 16)
        self.scale = scale

    def forward(self, x):
        return torch.softmax(self.fc(x) * self.scale, -1)


class AttentionScores(nn.Module):
    """softmax(q @ k^T / sqrt(d)) with q = k = the features (a non-local / self-similarity block): the product is
    formed before it is scaled down."""

    def forward(self, x):
        return torch.softmax(x @ x.transpose(-1, -2) / 8.0, -1)


class ViTBlock(nn.Module):
    """A pre-norm transformer block (attention and MLP, each with a residual) and the final LayerNorm, as a ViT
    ends. Every weight is nn.Linear's default (|w| < 0.25)."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        torch.manual_seed(0)
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.mlp(self.ln2(x))
        return self.norm(x)


class MobileViTAttention(nn.Module):
    """MobileViT's self-attention (MobileViTSelfAttention + MobileViTSelfOutput): q, k, v, softmax(q k^T / sqrt(d)) v,
    out projection (KB233, KB240)."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.query, self.key, self.value, self.out = (nn.Linear(dim, dim) for _ in range(4))

    def split(self, x):
        return x.view(x.shape[0], x.shape[1], self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        p = F.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim), dim=-1)
        c = torch.matmul(p, v).permute(0, 2, 1, 3).contiguous()
        return self.out(c.view(c.shape[0], c.shape[1], -1))


def features(scale, n=8, d=64, seed=1):
    torch.manual_seed(seed)
    return (torch.randn(1, n, d) * scale,)


def residual_stream(massive, n=8, d=32):
    """A residual stream with one "massive activation" channel (as LLMs and large ViTs have): the rest is N(0, 1)."""
    torch.manual_seed(1)
    x = torch.randn(1, n, d)
    x[..., 3] = massive
    return (x,)


def fp16_cases():
    """The cases KB075 and KB076 share: the L2 norm (bug, rescale workaround, control) and the softmax."""
    # Features of about 100: x * x reaches 1e5 and the sum over 64 of them 8.8e5; the result is at most 940.
    yield Case("l2-norm", L2Norm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    # The rescale workaround: the same input, judged against l2-norm's torch output.
    yield Case("l2-norm-rescaled", L2NormRescaled(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, trigger=False, rewrites="l2-norm")
    # Control: features of about 10, every intermediate under 65504.
    yield Case("l2-norm-small", L2Norm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, trigger=False)
    # Logits of about 1e5 (a logit scale of 1e5 on outputs of about 1).
    yield Case("softmax-logits", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)


def fp16_variants():
    """The variants KB075 and KB076 share: one family of models, measured on two engines' fp16 paths."""
    # Names ending in -opset13 / -opset17 / -dynamo / -onnxsim are converted by pnnx from the ONNX export, names
    # ending in -onnx2ncnn by onnx2ncnn, the rest by pnnx from TorchScript. All run on the engine's fp16 path.
    yield Case("l2-norm", L2Norm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("linalg-norm", LinalgNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("rmsnorm", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    # (Not the L2 norm from ONNX: its ReduceSum takes the axes as an input, which pnnx drops, KB022.)
    yield Case("rmsnorm-opset17", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("softmax-logits", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("softmax-logits-dynamo", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=18,
               dynamo=True, export_kwargs=ONE_FILE)
    yield Case("softmax-logits-onnxsim", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, simplify=True)
    # q @ k^T of features of about 40 over 64 channels: the diagonal reaches 1e5 before the division by 8.
    yield Case("attention-scores", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("attention-scores-dynamo", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=18,
               dynamo=True)
    # A ViT block whose residual stream carries one channel of 1e5: the LayerNorms handle it in fp32.
    yield Case("vit-block-massive", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("vit-block-massive-opset17", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False)
    # The same models through onnx2ncnn (opset 11: ReduceSum's axes are still an attribute there).
    yield Case("l2-norm-onnx2ncnn", L2Norm(), features(100.0), ["in0"], ["out0"], opset=11, dynamo=False)
    yield Case("softmax-logits-onnx2ncnn", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=11,
               dynamo=False)
    yield Case("attention-scores-onnx2ncnn", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=11,
               dynamo=False)
    # Near misses: the same models with every intermediate under 65504.
    yield Case("l2-norm-small", L2Norm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("rmsnorm-small", RMSNorm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("softmax-small-logits", ScaledSoftmax(10.0), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("attention-scores-small", AttentionScores(), features(1.0), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    # Right on ncnn 1.0.20261020 and up to 1.0.20250503; on 1.0.20250916 to 1.0.20260526 its LayerNorm's variance
    # (about 2.8e7) overflows and every output is 0: the page says so.
    yield Case("vit-block-in-range", ViTBlock().eval(), residual_stream(3e4), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("l2-norm-small-onnx2ncnn", L2Norm(), features(10.0), ["in0"], ["out0"], opset=11, dynamo=False)


# The plain CNN of the fp16-arithmetic family (KB229 ncnn on ARMv8.2, KB246 MNN precision low): no value near fp16's
# range, only its rounding, compounded layer after layer.
NARROW = (16, 32, 32, 64, 64, 128, 128, 128)
WIDE = (32, 64, 64, 128, 128, 256, 256, 256)
DEEP = (16, 32, 32, 32, 64, 64, 64, 128, 128, 128, 128, 128)


class DriftNet(nn.Module):
    """Conv3x3 + BatchNorm + ReLU blocks of the given widths (the 2nd, 4th and 6th of stride 2), a global average
    pool and nn.Linear(width, 4)."""

    def __init__(self, widths=NARROW, outputs=4):
        super().__init__()
        layers, cin = [], 3
        for i, w in enumerate(widths):
            layers += [nn.Conv2d(cin, w, 3, 2 if i in (1, 3, 5) else 1, 1, bias=False),
                       nn.BatchNorm2d(w, momentum=None), nn.ReLU()]
            cin = w
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(cin, outputs)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


def drift_net(widths=NARROW, seed=0):
    """The net with torch's default initialisation, BatchNorm scales in [0.5, 1.5] and shifts N(0, 0.2), and running
    statistics from four training-mode passes over batches of two 64x64 normal images (momentum None: their mean),
    the same on every CPU."""
    torch.manual_seed(seed)
    net = DriftNet(widths)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.2)
        # in float64, then rounded: float32 passes differ in the last bit from one x86 CPU to another (AVX2 or
        # AVX-512 kernels), and a last bit of a weight moves the fp16 drift (0.00434 here, 0.00176 on CI's CPU)
        net.double().train()
        for _ in range(4):
            net(torch.randn(2, 3, 64, 64, dtype=torch.float64))
    return net.float().eval()


def drift_image(seed=1):
    """A normalised 64x64 RGB input: N(0, 1)."""
    torch.manual_seed(seed)
    return (torch.randn(1, 3, 64, 64),)


# Space to depth and depth to space in TensorFlow's order (KB218, KB219): torch writes neither node so.

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
