"""KB072: ops onnx2ncnn has no rule for (GridSample, Einsum, Tile, CumSum, TopK, ScatterND, and the attention-mask
ops Where, Equal, Less, Greater, And, Not, Cast, IsNaN, Expand, ConstantOfShape, Range, Trilu; NonZero, Round, Mod,
ScatterElements): it prints "<Op> not supported yet!" and writes the op through under its ONNX name; ncnn then
refuses the .param or, for GridSample, runs it with default parameters."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import seeded
from kb.export import Case

SHAPE = (1, 4, 6, 8)  # N, C, H, W
GRID = (1, 5, 7, 2)  # N, H_out, W_out, (x, y)


class GridSample(nn.Module):
    """F.grid_sample on a given grid: the op of spatial transformers, optical-flow warps, deformable sampling."""

    def __init__(self, mode="bilinear", padding_mode="zeros", align_corners=False):
        super().__init__()
        self.kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)

    def forward(self, x, grid):
        return F.grid_sample(x, grid, **self.kw)


class FlowWarp(nn.Module):
    """A frame-interpolation / optical-flow warp (RIFE-style): a conv predicts a flow, the image is sampled at
    base grid + flow with border padding and align_corners=True."""

    def __init__(self):
        super().__init__()
        self.flow = nn.Conv2d(SHAPE[1], 2, 3, padding=1)
        h, w = SHAPE[2], SHAPE[3]
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
        self.register_buffer("base", torch.stack([xs, ys])[None])  # 1, 2, H, W

    def forward(self, x):
        grid = (self.base + 0.1 * torch.tanh(self.flow(x))).permute(0, 2, 3, 1)
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=True)


class Einsum(nn.Module):
    """torch.einsum: 'imjk,injk->imn' is the bilinear attention pooling of WS-DAN (Tencent/ncnn#2065)."""

    def __init__(self, equation="imjk,injk->imn"):
        super().__init__()
        self.equation = equation
        self.attn = nn.Conv2d(SHAPE[1], 2, 1)

    def forward(self, x):
        if self.equation == "imjk,injk->imn":
            return torch.einsum(self.equation, torch.sigmoid(self.attn(x)), x) / (SHAPE[2] * SHAPE[3])
        if self.equation == "matmul":  # the workaround: the same pooling as a MatMul of the flattened maps
            a = torch.sigmoid(self.attn(x))
            return torch.matmul(a.flatten(2), x.flatten(2).transpose(1, 2)) / (SHAPE[2] * SHAPE[3])
        return torch.einsum(self.equation, x, x)


class Repeat(nn.Module):
    """x.repeat / torch.tile, e.g. a mask or a per-channel map repeated over channels: ONNX Tile."""

    def __init__(self, how="repeat"):
        super().__init__()
        self.how = how

    def forward(self, x):
        if self.how == "repeat":
            return x.repeat(1, 2, 1, 1)
        if self.how == "tile":
            return torch.tile(x, (1, 1, 2, 1))
        if self.how == "cat":  # near miss: the same repeat as a Concat
            return torch.cat([x, x], dim=1)
        raise ValueError(self.how)


class Cumulative(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(torch.relu(x) + 0.1, dim=self.dim)


class TopK(nn.Module):
    """A 1x1 conv head, then the top 3 scores over the channels and their indices."""

    def __init__(self, how="topk"):
        super().__init__()
        self.how = how
        self.conv = nn.Conv2d(SHAPE[1], SHAPE[1], 1)

    def forward(self, x):
        y = self.conv(x)
        if self.how == "topk":
            return torch.topk(y, 3, dim=1)
        if self.how == "amax":  # near miss: the largest score only, ReduceMax
            return y.amax(dim=1, keepdim=True)
        raise ValueError(self.how)


class SliceAssign(nn.Module):
    """In-place assignment to a slice (y[:, 1:3] = v): ONNX ScatterND."""

    def __init__(self, how="const"):
        super().__init__()
        self.how = how

    def forward(self, x):
        y = x.clone()
        if self.how == "const":
            y[:, 1:3] = 0.5
        elif self.how == "cat":  # the workaround: the same result as a Concat of slices and a constant
            y = torch.cat([x[:, :1], torch.full_like(x[:, 1:3], 0.5), x[:, 3:]], dim=1)
        elif self.how == "rows":  # rows written from other rows, as a feature update writes it
            y[:, :, 2] = x[:, :, 3] * 2
        return y


class Misc(nn.Module):
    """Ops onnx2ncnn once printed 'not supported yet!' for, and converts now: guards."""

    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x):
        if self.op == "gelu-erf":  # exact GELU: Erf (Tencent/ncnn#4952, FastViT)
            return F.gelu(x)
        if self.op == "erf":
            return torch.erf(x)
        if self.op == "sign":  # Tencent/ncnn#4726, #2065
            return torch.sign(x) * x * x
        if self.op == "pad-replicate":  # Pad mode=edge
            return F.pad(x, (1, 1, 2, 2), mode="replicate")
        raise ValueError(self.op)


T, D = 6, 8  # tokens, features of the attention-mask blocks


class MaskedAttention(nn.Module):
    """Single-head self-attention with the mask code of text models. The projections are left out (q = x,
    k = x / 2, v = x) so that only the mask decides the outcome; the softmax dim is written positively (dim=2)
    because onnx2ncnn maps softmax(dim=-1) at opset 13+ to the wrong axis (KB060)."""

    def __init__(self, how):
        super().__init__()
        self.how = how
        # nanoGPT's causal-mask buffer: tril(ones(block, block)), sliced to the sequence length
        self.register_buffer("bias", torch.tril(torch.ones(16, 16)).view(1, 16, 16))

    def forward(self, x, mask=None):
        q, k, v = x, x * 0.5, x
        s = q @ k.transpose(1, 2) / math.sqrt(D)
        t = x.size(1)
        h = self.how
        if h == "padding":  # BERT: a 1/0 padding mask, masked_fill(mask == 0, -inf)
            s = s.masked_fill(mask == 0, float("-inf"))
        elif h == "padding-lt":
            s = s.masked_fill(mask < 0.5, -1e4)
        elif h == "padding-le":
            s = s.masked_fill(mask <= 0.5, -1e4)
        elif h == "padding-where":  # torch.where(mask, scores, -1e4)
            s = torch.where(mask > 0.5, s, torch.tensor(-1e4))
        elif h == "padding-additive":  # the workaround: HF's extended mask, (1 - mask) * -10000 added
            s = s + (1.0 - mask) * -10000.0
        elif h == "causal":  # nanoGPT: masked_fill(bias[:, :T, :T] == 0, -inf)
            s = s.masked_fill(self.bias[:, :t, :t] == 0, float("-inf"))
        elif h == "causal-arange":  # a causal mask from torch.arange of the sequence length
            i = torch.arange(t)
            s = s.masked_fill(i[None, :] > i[:, None], float("-inf"))
        elif h == "causal-additive":  # the workaround: an additive mask, folded to a constant by onnxsim
            s = s + torch.triu(torch.full((t, t), float("-inf")), 1)
        elif h == "padding-and-causal":  # a decoder: keep = causal AND not padding, masked_fill(~keep)
            causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
            keep = torch.logical_and(causal[None], mask > 0.5)
            s = s.masked_fill(~keep, -1e4)
        elif h == "sdpa-bool":  # F.scaled_dot_product_attention with a boolean mask: the exporter adds an IsNaN guard
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask > 0.5)
        else:
            raise ValueError(h)
        return torch.softmax(s, dim=2) @ v


class Elementwise(nn.Module):
    """Other ops on data that onnx2ncnn has no rule for, and rewrites that it converts."""

    def __init__(self, how):
        super().__init__()
        self.how = how
        torch.manual_seed(3)
        self.cls = nn.Parameter(torch.randn(1, 1, D))  # a ViT class token
        self.register_buffer("upper", torch.triu(torch.ones(T, D)))
        self.register_buffer("index", torch.randint(0, T, (1, 3, D)))

    def forward(self, x):
        h = self.how
        if h == "round":  # quantize to quarter steps
            return torch.round(x * 4) / 4
        if h == "round-as-floor":  # the rewrite: half-up instead of half-to-even, the same away from ties
            return torch.floor(x * 4 + 0.5) / 4
        if h == "fmod":
            return torch.fmod(x, 0.7)
        if h == "fmod-as-floor":  # the rewrite: x - trunc(x / c) * c, trunc as sign * floor(abs)
            q = x / 0.7
            return x - torch.sign(q) * torch.floor(torch.abs(q)) * 0.7
        if h == "remainder":  # near miss: torch.remainder exports as Div, Floor, Mul, Sub
            return torch.remainder(x, 0.7)
        if h == "triu":
            return torch.triu(x)
        if h == "triu-as-mul":  # the rewrite: multiply by a constant upper-triangular 0/1 matrix
            return x * self.upper
        if h == "scatter":  # rows written at given positions: ScatterElements
            return x.scatter(1, self.index, torch.relu(x[:, :3]))
        if h == "scatter-add":
            return x.scatter_add(1, self.index, x[:, :3])
        if h == "nonzero":  # positions above a threshold, as a detector's score filter takes them
            return torch.nonzero(x > 0.5).float()
        if h == "isnan":  # a NaN guard
            return torch.where(torch.isnan(x), torch.zeros_like(x), x)
        if h == "nan-to-num":
            return torch.nan_to_num(x)
        if h == "global-concat":  # PointNet-style: a global feature expanded to every token, concatenated
            g = x.amax(dim=1, keepdim=True)
            return torch.cat([x, g.expand(-1, T, -1)], dim=2)
        if h == "global-concat-add":  # the rewrite: broadcast by adding a zero tensor instead of Expand
            g = x.amax(dim=1, keepdim=True)
            return torch.cat([x, g + torch.zeros(1, T, D)], dim=2)
        if h == "vit-cls":  # ViT: the class token expanded to the batch and concatenated
            return torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        if h == "arange-position":  # a sinusoidal position code from torch.arange of the sequence length
            pos = torch.arange(x.size(1), dtype=torch.float32)[:, None]
            return x + torch.sin(pos * 0.1)
        raise ValueError(h)


def tokens_in():
    torch.manual_seed(4)
    return torch.randn(1, T, D)


def mask_in():
    return torch.tensor([[[1.0, 1, 1, 1, 0, 0]]])  # 1, 1, T: two padding tokens at the end


def x_in():
    torch.manual_seed(1)
    return torch.randn(*SHAPE)


def grid_in():
    torch.manual_seed(2)
    return torch.rand(*GRID) * 2.4 - 1.2  # a little outside [-1, 1]: padding_mode matters


IO = dict(input_names=["in0"], output_names=["out0"])
IO_GRID = dict(input_names=["in0", "in1"], output_names=["out0"])
IO_TOPK = dict(input_names=["in0"], output_names=["out0", "out1"])
IO_MASK = dict(input_names=["in0", "in1"], output_names=["out0"])
DYN = dict(external_data=False)
SEQ = {"dynamic_axes": {"in0": {1: "T"}}}  # a variable sequence length, as text models are exported


def cases():
    x, grid = x_in(), grid_in()
    yield Case("grid-sample", GridSample(align_corners=True), (x, grid), opset=16, dynamo=False, torchscript=True,
               **IO_GRID)
    yield Case("einsum", seeded(Einsum), (x,), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("einsum-as-matmul", seeded(Einsum, "matmul"), (x,), opset=13, dynamo=False, simplify=True,
               trigger=False, rewrites="einsum", **IO)  # onnxsim folds flatten's Shape ops
    yield Case("tile", Repeat(), (x,), opset=13, dynamo=False, simplify=True, torchscript=True, **IO)
    yield Case("cumsum", Cumulative(), (x,), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("topk", seeded(TopK), (x,), opset=13, dynamo=False, torchscript=True, **IO_TOPK)
    yield Case("scatter-nd", SliceAssign(), (x,), opset=13, dynamo=False, simplify=True, torchscript=True, **IO)
    yield Case("slice-assign-as-cat", SliceAssign("cat"), (x,), opset=13, dynamo=False, simplify=True, trigger=False,
               rewrites="scatter-nd", **IO)
    # Controls on the same path: grid_sample with ncnn's defaults (bilinear, zeros, align_corners=False), which
    # onnx2ncnn also prints "not supported yet!" for; and ops onnx2ncnn converts now.
    yield Case("grid-sample-defaults", GridSample(), (x, grid), opset=16, dynamo=False, trigger=False, **IO_GRID)
    yield Case("gelu-erf", Misc("gelu-erf"), (x,), opset=13, dynamo=False, trigger=False, **IO)
    yield Case("sign", Misc("sign"), (x,), opset=13, dynamo=False, trigger=False, **IO)
    yield Case("pad-replicate", Misc("pad-replicate"), (x,), opset=13, dynamo=False, simplify=True, trigger=False,
               **IO)
    # The attention-mask ops and other ops on data: each original, then its rewrite (same inputs).
    t, m = tokens_in(), mask_in()
    yield Case("padding-mask", MaskedAttention("padding"), (t, m), opset=13, dynamo=False, simplify=True, **IO_MASK)
    yield Case("padding-mask-additive", MaskedAttention("padding-additive"), (t, m), opset=13, dynamo=False,
               simplify=True, trigger=False, rewrites="padding-mask", **IO_MASK)
    yield Case("causal-mask", MaskedAttention("causal"), (t,), opset=13, dynamo=False, **IO)
    yield Case("causal-mask-additive", MaskedAttention("causal-additive"), (t,), opset=14, dynamo=False,
               simplify=True, trigger=False, rewrites="causal-mask", **IO)  # onnxsim folds the Trilu
    yield Case("global-expand", Elementwise("global-concat"), (t,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("global-expand-as-add", Elementwise("global-concat-add"), (t,), opset=13, dynamo=False, simplify=True,
               trigger=False, rewrites="global-expand", **IO)
    yield Case("arange-position", Elementwise("arange-position"), (t,), opset=13, dynamo=False,
               export_kwargs=SEQ, **IO)
    yield Case("arange-position-fixed", Elementwise("arange-position"), (t,), opset=13, dynamo=False, simplify=True,
               trigger=False, rewrites="arange-position", **IO)
    yield Case("triu", Elementwise("triu"), (t,), opset=14, dynamo=False, **IO)
    yield Case("triu-as-mul", Elementwise("triu-as-mul"), (t,), opset=14, dynamo=False, trigger=False,
               rewrites="triu", **IO)
    yield Case("round", Elementwise("round"), (t,), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("round-as-floor", Elementwise("round-as-floor"), (t,), opset=13, dynamo=False, trigger=False,
               rewrites="round", **IO)
    yield Case("fmod", Elementwise("fmod"), (t,), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("fmod-as-floor", Elementwise("fmod-as-floor"), (t,), opset=13, dynamo=False, trigger=False,
               rewrites="fmod", **IO)
    yield Case("scatter-elements", Elementwise("scatter"), (t,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("nonzero", Elementwise("nonzero"), (t,), opset=13, dynamo=False, **IO)


def variants():
    x, grid = x_in(), grid_in()
    yield Case("grid-sample-nearest-opset16", GridSample(mode="nearest"), (x, grid), opset=16, dynamo=False,
               **IO_GRID)
    yield Case("grid-sample-border-opset17", GridSample(padding_mode="border"), (x, grid), opset=17, dynamo=False,
               **IO_GRID)
    yield Case("grid-sample-align-corners-dynamo", GridSample(align_corners=True), (x, grid), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **IO_GRID)
    yield Case("grid-sample-reflection-onnxsim", GridSample(padding_mode="reflection"), (x, grid), opset=17,
               dynamo=False, simplify=True, **IO_GRID)
    yield Case("flow-warp-block", seeded(FlowWarp), (x,), opset=16, dynamo=False, **IO)
    yield Case("einsum-opset17", seeded(Einsum), (x,), opset=17, dynamo=False, **IO)
    yield Case("einsum-dynamo", seeded(Einsum), (x,), opset=18, dynamo=True, export_kwargs={"external_data": False},
               **IO)
    yield Case("einsum-spatial-onnxsim", Einsum("nchw,nchw->nhw"), (x,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("tile-unsimplified", Repeat(), (x,), opset=13, dynamo=False, **IO)
    yield Case("torch-tile-dynamo", Repeat("tile"), (x,), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **IO)
    yield Case("cumsum-opset17", Cumulative(), (x,), opset=17, dynamo=False, **IO)
    yield Case("cumsum-channels-dynamo", Cumulative(dim=1), (x,), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **IO)
    yield Case("topk-opset17-onnxsim", seeded(TopK), (x,), opset=17, dynamo=False, simplify=True, **IO_TOPK)
    yield Case("topk-dynamo", seeded(TopK), (x,), opset=18, dynamo=True, export_kwargs={"external_data": False},
               **IO_TOPK)
    yield Case("scatter-nd-rows-opset17", SliceAssign("rows"), (x,), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("scatter-nd-opset13", SliceAssign(), (x,), opset=13, dynamo=False, **IO)
    # Near misses: the same functions written with ops onnx2ncnn converts, and ops it converts now.
    yield Case("grid-sample-defaults-opset17", GridSample(), (x, grid), opset=17, dynamo=False, **IO_GRID)
    yield Case("grid-sample-defaults-dynamo", GridSample(), (x, grid), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **IO_GRID)
    yield Case("einsum-as-matmul-opset17", seeded(Einsum, "matmul"), (x,), opset=17, dynamo=False, simplify=True,
               **IO)
    yield Case("repeat-as-cat", Repeat("cat"), (x,), opset=13, dynamo=False, **IO)
    yield Case("amax-head", seeded(TopK, "amax"), (x,), opset=13, dynamo=False, **IO)
    yield Case("gelu-erf-opset17", Misc("gelu-erf"), (x,), opset=17, dynamo=False, **IO)
    yield Case("erf-opset13", Misc("erf"), (x,), opset=13, dynamo=False, **IO)
    yield Case("sign-dynamo", Misc("sign"), (x,), opset=18, dynamo=True, export_kwargs={"external_data": False}, **IO)
    # The attention-mask family and the other ops on data.
    t, m = tokens_in(), mask_in()
    yield Case("padding-mask-opset17", MaskedAttention("padding"), (t, m), opset=17, dynamo=False, **IO_MASK)
    yield Case("padding-mask-dynamo", MaskedAttention("padding"), (t, m), opset=18, dynamo=True, export_kwargs=DYN,
               **IO_MASK)
    yield Case("masked-fill-lt-onnxsim", MaskedAttention("padding-lt"), (t, m), opset=17, dynamo=False, simplify=True,
               **IO_MASK)
    yield Case("masked-fill-le-opset17", MaskedAttention("padding-le"), (t, m), opset=17, dynamo=False, **IO_MASK)
    yield Case("torch-where-gt-dynamo", MaskedAttention("padding-where"), (t, m), opset=18, dynamo=True,
               export_kwargs=DYN, **IO_MASK)
    yield Case("causal-mask-onnxsim", MaskedAttention("causal"), (t,), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("causal-mask-dynamo", MaskedAttention("causal"), (t,), opset=18, dynamo=True, export_kwargs=DYN, **IO)
    yield Case("causal-arange-seq-axis", MaskedAttention("causal-arange"), (t,), opset=17, dynamo=False,
               export_kwargs=SEQ, **IO)
    yield Case("padding-and-causal-opset17", MaskedAttention("padding-and-causal"), (t, m), opset=17, dynamo=False,
               **IO_MASK)
    yield Case("sdpa-bool-mask-onnxsim", MaskedAttention("sdpa-bool"), (t, m), opset=17, dynamo=False, simplify=True,
               **IO_MASK)
    yield Case("isnan-guard-opset13", Elementwise("isnan"), (t,), opset=13, dynamo=False, **IO)
    yield Case("nan-to-num-opset17", Elementwise("nan-to-num"), (t,), opset=17, dynamo=False, **IO)
    yield Case("arange-position-dynamo", Elementwise("arange-position"), (t,), opset=18, dynamo=True,
               export_kwargs=dict(DYN, dynamic_shapes=({1: torch.export.Dim("T", min=2, max=64)},)), **IO)
    yield Case("vit-cls-token-opset17", Elementwise("vit-cls"), (t,), opset=17, dynamo=False, **IO)
    yield Case("global-expand-dynamo", Elementwise("global-concat"), (t,), opset=18, dynamo=True, export_kwargs=DYN,
               **IO)
    yield Case("triu-dynamo", Elementwise("triu"), (t,), opset=18, dynamo=True, export_kwargs=DYN, **IO)
    yield Case("nonzero-onnxsim", Elementwise("nonzero"), (t,), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("round-dynamo", Elementwise("round"), (t,), opset=18, dynamo=True, export_kwargs=DYN, **IO)
    yield Case("fmod-opset17-onnxsim", Elementwise("fmod"), (t,), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("scatter-add-opset13", Elementwise("scatter-add"), (t,), opset=13, dynamo=False, **IO)
    # Near misses: masks onnx2ncnn converts (additive, or folded to a constant by onnxsim), and the rewrites.
    yield Case("padding-additive-opset17", MaskedAttention("padding-additive"), (t, m), opset=17, dynamo=False,
               **IO_MASK)
    yield Case("causal-additive-dynamo", MaskedAttention("causal-additive"), (t,), opset=18, dynamo=True,
               export_kwargs=DYN, **IO)
    yield Case("vit-cls-token-onnxsim", Elementwise("vit-cls"), (t,), opset=17, dynamo=False, simplify=True, **IO)
    yield Case("round-as-floor-dynamo", Elementwise("round-as-floor"), (t,), opset=18, dynamo=True, export_kwargs=DYN,
               **IO)
    yield Case("remainder-opset17", Elementwise("remainder"), (t,), opset=17, dynamo=False, **IO)
    yield Case("triu-as-mul-opset17", Elementwise("triu-as-mul"), (t,), opset=17, dynamo=False, **IO)
