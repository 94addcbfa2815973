"""known-bug: Tencent/ncnn#2647, Tencent/ncnn#2753 -- onnx2ncnn has no rule for a Gather on data (index_select,
x[:, idx], torch.gather): it writes the op through as `Gather`, a layer ncnn does not have."""

import torch
from torch import nn

from kb.export import Case

C, H = 6, 5  # channels, height and width
IDX = [0, 2, 3]  # the channels kept: not one contiguous run


class IndexSelect(nn.Module):
    """torch.index_select with a constant index tensor (a channel selection, as in a pruned model)."""

    def __init__(self, dim=1, idx=IDX):
        super().__init__()
        self.dim = dim
        self.register_buffer("idx", torch.tensor(idx))

    def forward(self, x):
        return torch.index_select(x, self.dim, self.idx)


class TensorIndex(nn.Module):
    """x[:, idx] or x[..., idx] with a tensor index."""

    def __init__(self, last=False, idx=IDX):
        super().__init__()
        self.last = last
        self.register_buffer("idx", torch.tensor(idx))

    def forward(self, x):
        return x[..., self.idx] if self.last else x[:, self.idx]


class IntIndex(nn.Module):
    """x[:, k] or x[..., k] with a Python int: a Gather with one constant index."""

    def __init__(self, k, last=False):
        super().__init__()
        self.k, self.last = k, last

    def forward(self, x):
        return x[..., self.k] if self.last else x[:, self.k]


class TorchGather(nn.Module):
    """torch.gather along the channels with a constant index: ONNX GatherElements."""

    def __init__(self):
        super().__init__()
        self.register_buffer("idx", torch.tensor(IDX).reshape(1, 3, 1, 1).expand(1, 3, H, H).contiguous())

    def forward(self, x):
        return torch.gather(x, 1, self.idx)


class SliceCat(nn.Module):
    """The workaround: the same channels as slices, concatenated (x[:, 0:1] and x[:, 2:4])."""

    def forward(self, x):
        return torch.cat([x[:, 0:1], x[:, 2:4]], 1)


class Slice(nn.Module):
    """Near miss: a plain slice of contiguous channels."""

    def forward(self, x):
        return x[:, 2:4]


class RelativePositionBias(nn.Module):
    """EfficientFormer / LeViT attention bias: a learned (heads, N) table indexed by a constant (N, N) buffer of
    relative offsets, added to the scores. torch's exporter keeps the Gather of the parameter."""

    def __init__(self, heads=C, res=2):
        super().__init__()
        n = res * res
        self.attention_biases = nn.Parameter(torch.randn(heads, n))
        pts = [(i, j) for i in range(res) for j in range(res)]
        idx = [abs(a[0] - b[0]) * res + abs(a[1] - b[1]) for a in pts for b in pts]
        self.register_buffer("attention_bias_idxs", torch.tensor(idx).view(n, n), persistent=False)

    def forward(self, scores):
        return (scores + self.attention_biases[:, self.attention_bias_idxs]).softmax(3)


class Block(nn.Module):
    """A realistic block: conv, keep some channels (pruning), conv."""

    def __init__(self, select=None):
        super().__init__()
        torch.manual_seed(0)
        self.conv1 = nn.Conv2d(C, C, 3, padding=1)
        self.conv2 = nn.Conv2d(len(IDX), 4, 1)
        self.select = select or IndexSelect()

    def forward(self, x):
        return self.conv2(torch.relu(self.select(torch.relu(self.conv1(x)))))


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, C, H, H)
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("index-select", IndexSelect(), (x,), opset=13, dynamo=False, torchscript=True, **io)
    # The workaround: the same channels as two slices and a concat, fed the same input.
    yield Case("slice-cat", SliceCat(), (x,), opset=13, dynamo=False, trigger=False, rewrites="index-select", **io)
    yield Case("pruned-block", Block(), (x,), opset=13, dynamo=False, torchscript=True, **io)
    yield Case("pruned-block-slices", Block(SliceCat()), (x,), opset=13, dynamo=False, trigger=False,
               rewrites="pruned-block", **io)
    # A control on the same path: a contiguous slice (ONNX Slice), no Gather.
    yield Case("slice", Slice(), (x,), opset=13, dynamo=False, trigger=False, **io)


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, C, H, H)
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("index-select-opset17", IndexSelect(), (x,), opset=17, dynamo=False, **io)
    yield Case("index-select-dynamo", IndexSelect(), (x,), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **io)
    yield Case("index-select-onnxsim", IndexSelect(), (x,), opset=13, dynamo=False, simplify=True, **io)
    yield Case("index-select-width", IndexSelect(dim=3), (x,), opset=13, dynamo=False, **io)
    yield Case("tensor-index-channels", TensorIndex(), (x,), opset=13, dynamo=False, **io)
    yield Case("tensor-index-last-axis", TensorIndex(last=True), (x,), opset=13, dynamo=False, **io)
    yield Case("torch-gather", TorchGather(), (x,), opset=13, dynamo=False, **io)
    yield Case("pruned-block-opset17", Block(), (x,), opset=17, dynamo=False, **io)
    yield Case("relative-position-bias", RelativePositionBias(), (torch.randn(1, C, 4, 4),), opset=17, dynamo=False, **io)
    # Near misses: one constant index, which onnx2ncnn folds into a Crop; a plain slice.
    yield Case("int-index-near-miss", IntIndex(2), (x,), opset=13, dynamo=False, **io)
    yield Case("int-index-last-axis-near-miss", IntIndex(2, last=True), (x,), opset=13, dynamo=False, **io)
    yield Case("int-index-negative", IntIndex(-1, last=True), (x,), opset=13, dynamo=False, **io)
    yield Case("int-index-dynamo", IntIndex(2, last=True), (x,), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **io)
    yield Case("single-index-select-near-miss", IndexSelect(idx=[2]), (x,), opset=13, dynamo=False, **io)
    yield Case("slice-near-miss", Slice(), (x,), opset=13, dynamo=False, **io)
