"""KB072: ops onnx2ncnn has no rule for (GridSample, Einsum, Tile, CumSum, TopK, ScatterND): it prints
"<Op> not supported yet!" and writes the op through under its ONNX name; ncnn then refuses the .param or, for
GridSample, runs it with default parameters."""

import torch
import torch.nn.functional as F
from torch import nn

from convkb.export import Case

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


def x_in():
    torch.manual_seed(1)
    return torch.randn(*SHAPE)


def grid_in():
    torch.manual_seed(2)
    return torch.rand(*GRID) * 2.4 - 1.2  # a little outside [-1, 1]: padding_mode matters


def seeded(cls, *args, **kw):
    torch.manual_seed(0)  # the same weights whichever cases came before
    return cls(*args, **kw)


IO = dict(input_names=["in0"], output_names=["out0"])
IO_GRID = dict(input_names=["in0", "in1"], output_names=["out0"])
IO_TOPK = dict(input_names=["in0"], output_names=["out0", "out1"])


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
