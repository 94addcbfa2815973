"""KB048: nn.Embedding (an ONNX Gather on a constant table, indexed by a model input) through onnx2ncnn.

onnx2ncnn folds a Gather only when its index is one constant element; an embedding lookup's index is
the model's input, so the Gather is written through unconverted and ncnn cannot load it.
"""

import torch
from torch import nn

from kb.export import Case

V, D, T = 10, 8, 3  # vocabulary size, embedding width, tokens


def table(padding_idx=None):
    torch.manual_seed(0)
    return nn.Embedding(V, D, padding_idx=padding_idx)


class Lookup(nn.Module):
    """The smallest case: one nn.Embedding on an int64 index tensor."""

    def __init__(self, padding_idx=None):
        super().__init__()
        self.emb = table(padding_idx)

    def forward(self, idx):
        return self.emb(idx)


class TextCNN(nn.Module):
    """A realistic block: token embedding, then a 1-D conv, ReLU and a linear head on the pooled tokens."""

    def __init__(self, embed=True):
        super().__init__()
        self.emb = table() if embed else None
        torch.manual_seed(1)
        self.conv = nn.Conv1d(D, 6, 3, padding=1)
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        e = self.emb(x) if self.emb is not None else x  # (1, T, D)
        y = torch.relu(self.conv(e.transpose(1, 2)))  # (1, 6, T)
        return self.fc(y.mean(2))


class TokenPlusPosition(nn.Module):
    """Token embedding plus a learned position embedding indexed by a constant arange (BERT-style)."""

    def __init__(self):
        super().__init__()
        self.tok = table()
        torch.manual_seed(2)
        self.pos = nn.Embedding(T, D)

    def forward(self, idx):
        return self.tok(idx) + self.pos(torch.arange(T))


class FixedRow(nn.Module):
    """Near miss: a lookup with a constant index, added to a float input; the exporter folds the Gather."""

    def __init__(self):
        super().__init__()
        self.emb = table()

    def forward(self, x):
        return x + self.emb(torch.tensor([2]))


class OneHotLinear(nn.Module):
    """Near miss: the same table applied to a float one-hot input as a bias-free Linear (a MatMul, no Gather)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(V, D, bias=False)
        with torch.no_grad():
            self.fc.weight.copy_(table().weight.t())

    def forward(self, onehot):
        return self.fc(onehot)


IDX = torch.tensor([[1, 2, 3]])  # int64, as tokenizers give them


def cases():
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("embedding", Lookup(), (IDX,), opset=13, dynamo=False, torchscript=True, **io)
    yield Case("text-cnn", TextCNN(), (IDX,), opset=13, dynamo=False, **io)
    # Control: the same text CNN fed the embedded tokens (the lookup done outside the model).
    with torch.no_grad():
        embedded = table()(IDX)
    yield Case("text-cnn-embedded-input", TextCNN(embed=False), (embedded,), opset=13, dynamo=False, trigger=False,
               **io)


def variants():
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("lookup-opset13", Lookup(), (IDX,), opset=13, dynamo=False, **io)
    yield Case("lookup-opset17", Lookup(), (IDX,), opset=17, dynamo=False, **io)
    yield Case("lookup-dynamo", Lookup(), (IDX,), opset=18, dynamo=True, export_kwargs={"external_data": False}, **io)
    yield Case("lookup-onnxsim", Lookup(), (IDX,), opset=13, dynamo=False, simplify=True, **io)
    yield Case("padding-idx", Lookup(padding_idx=0), (IDX,), opset=13, dynamo=False, **io)
    yield Case("one-d-index", Lookup(), (IDX[0],), opset=13, dynamo=False, **io)
    yield Case("text-cnn-block", TextCNN(), (IDX,), opset=13, dynamo=False, **io)
    yield Case("token-plus-position", TokenPlusPosition(), (IDX,), opset=13, dynamo=False, **io)
    torch.manual_seed(3)
    yield Case("fixed-row-near-miss", FixedRow(), (torch.randn(1, D),), opset=13, dynamo=False, **io)
    yield Case("onehot-linear-near-miss", OneHotLinear(), (nn.functional.one_hot(IDX, V).float(),), opset=13,
               dynamo=False, **io)
