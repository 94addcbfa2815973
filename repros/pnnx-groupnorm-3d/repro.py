"""KB050: nn.GroupNorm with as many groups as channels on a 3-D (N, C, L) tensor, as in wav2vec2 / HuBERT's
feature encoder. From ONNX, pnnx writes it as nn.InstanceNorm1d, a layer ncnn does not have."""

import torch
from torch import nn

from kb.export import Case

C, L = 8, 30


def seeded(make, seed=0):
    torch.manual_seed(seed)
    m = make()
    for p in m.modules():  # non-trivial affine parameters, so a dropped weight or bias shows
        if isinstance(p, (nn.GroupNorm, nn.InstanceNorm1d, nn.InstanceNorm2d)) and getattr(p, "affine", True):
            p.weight.data.uniform_(0.5, 1.5)
            p.bias.data.uniform_(-0.5, 0.5)
    return m


class Norm(nn.Module):
    """One norm layer, then a scale (so the output is not the norm's own blob)."""

    def __init__(self, kind, groups=C):
        super().__init__()
        self.kind = kind
        if kind == "groupnorm":
            self.norm = nn.GroupNorm(groups, C)
        elif kind == "instancenorm1d":
            self.norm = nn.InstanceNorm1d(C, affine=True)
        elif kind == "instancenorm2d":
            self.norm = nn.InstanceNorm2d(C, affine=True)
        else:
            raise ValueError(kind)

    def forward(self, x):
        return self.norm(x) * 2


class Unsqueezed(nn.Module):
    """The workaround: the same GroupNorm run on (N, C, L, 1), then the unit axis dropped again."""

    def __init__(self, norm):
        super().__init__()
        self.norm = norm

    def forward(self, x):
        return self.norm(x.unsqueeze(-1)).squeeze(-1) * 2


class ConvInstanceNorm(nn.Module):
    """A Conv1d followed by nn.InstanceNorm1d(affine=True), as in 1-D vocoder / voice-conversion encoders."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(C, C, 3, padding=1)
        self.norm = nn.InstanceNorm1d(C, affine=True)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


class ConvGroupNorm(nn.Module):
    """A Conv1d, then GroupNorm(groups, C) on its (N, C, L) output (EnCodec's SConv1d, time_group_norm)."""

    def __init__(self, groups):
        super().__init__()
        self.conv = nn.Conv1d(C, C, 3, padding=1)
        self.norm = nn.GroupNorm(groups, C)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


class FeatureEncoder(nn.Module):
    """wav2vec2 / HuBERT's first feature-encoder layer (feat_extract_norm="group"): a strided Conv1d on the raw
    waveform, GroupNorm(C, C), GELU; then a second conv layer without norm, as the model has."""

    def __init__(self, c=16):
        super().__init__()
        self.conv0 = nn.Conv1d(1, c, 10, 5, bias=False)
        self.norm = nn.GroupNorm(c, c)
        self.conv1 = nn.Conv1d(c, c, 3, 2, bias=False)

    def forward(self, x):
        x = nn.functional.gelu(self.norm(self.conv0(x)))
        return nn.functional.gelu(self.conv1(x))


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, C, L)
    io = dict(input_names=["in0"], output_names=["out0"])
    gn = seeded(lambda: Norm("groupnorm"))
    yield Case("groupnorm-cc", gn, (x,), opset=17, dynamo=False, torchscript=True, **io)
    # Workaround: the same GroupNorm (same weights) applied to x.unsqueeze(-1), a 4-D tensor.
    yield Case("groupnorm-cc-unsqueezed", Unsqueezed(gn.norm), (x,), opset=17, dynamo=False,
               rewrites="groupnorm-cc", trigger=False, **io)
    # Workaround: the same model from TorchScript (its ONNX export is the trigger itself).
    wav = torch.randn(1, 1, 400)
    enc = seeded(FeatureEncoder)
    yield Case("feature-encoder", enc, (wav,), opset=17, dynamo=False, torchscript=True, **io)
    # nn.InstanceNorm1d itself, after a Conv1d, from both front ends.
    yield Case("conv-instancenorm1d", seeded(ConvInstanceNorm), (x,), opset=17, dynamo=False, torchscript=True, **io)
    # Control: GroupNorm on a 4-D tensor, groups == channels, the same ONNX path.
    yield Case("groupnorm-cc-4d", seeded(lambda: Norm("groupnorm")), (torch.randn(1, C, 5, 6),), opset=17,
               dynamo=False, trigger=False, **io)


def variant(name, module, x, opset=17, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(1)
    x3, x4, wav = torch.randn(1, C, L), torch.randn(1, C, 5, 6), torch.randn(1, 1, 400)
    gn = lambda: seeded(lambda: Norm("groupnorm"))  # noqa: E731
    yield variant("groupnorm-cc-opset13", gn(), x3, opset=13)
    yield variant("groupnorm-cc-opset18", gn(), x3, opset=18)
    yield variant("groupnorm-cc-dynamo", gn(), x3, opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("groupnorm-cc-onnxsim", gn(), x3, simplify=True)
    yield variant("feature-encoder-opset17", seeded(FeatureEncoder), wav)
    yield variant("feature-encoder-dynamo", seeded(FeatureEncoder), wav, opset=18, dynamo=True,
                  export_kwargs={"external_data": False})
    yield variant("conv-instancenorm1d-opset13", seeded(ConvInstanceNorm), x3, opset=13)
    yield variant("groupnorm-cc-4d-near-miss", gn(), x4)
    yield variant("instancenorm2d-near-miss", seeded(lambda: Norm("instancenorm2d")), x4)
    yield variant("layernorm-3d-near-miss", seeded(lambda: nn.LayerNorm(L)), x3)
    # Fewer groups than channels on the same 3-D tensor: the Reshape into groups is no no-op, pnnx keeps the
    # GroupNorm (EnCodec's time_group_norm is GroupNorm(1, C) after a Conv1d).
    yield variant("groupnorm-2-groups-3d-near-miss", seeded(lambda: Norm("groupnorm", groups=2)), x3)
    yield variant("groupnorm-1-group-3d-dynamo-near-miss", seeded(lambda: Norm("groupnorm", groups=1)), x3, opset=18,
                  dynamo=True, export_kwargs={"external_data": False})
    yield variant("conv-groupnorm-1-group-near-miss", seeded(lambda: ConvGroupNorm(1)), x3)
    # GroupNorm(C, C) on 4-D, as diffusers / RT-DETR write it, from the dynamo exporter.
    yield variant("groupnorm-cc-4d-dynamo-near-miss", gn(), x4, opset=18, dynamo=True,
                  export_kwargs={"external_data": False})
