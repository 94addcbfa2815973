"""KB127: nn.GRUCell / nn.LSTMCell traced to TorchScript and converted by pnnx: pnnx inlines the cell into aten ops
and has no ncnn rule for its aten::unsafe_chunk, so the .ncnn.param keeps pnnx.Expression, aten::unsafe_chunk and
prim::ListUnpack layers, and ncnn stops at "layer pnnx.Expression not exists or registered"."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Cell(nn.Module):
    """One step of a recurrent cell, then a Linear: how="cell" calls nn.GRUCell / nn.LSTMCell (the bug),
    how="seq" runs the same weights as nn.GRU / nn.LSTM over a sequence of length 1 (the workaround)."""

    def __init__(self, kind="gru", how="cell", hidden=32):
        super().__init__()
        self.kind, self.how = kind, how
        self.cell = {"gru": nn.GRUCell, "lstm": nn.LSTMCell, "rnn": nn.RNNCell}[kind](16, hidden)
        self.fc = nn.Linear(hidden, 8)
        if how == "seq":
            self.seq = {"gru": nn.GRU, "lstm": nn.LSTM}[kind](16, hidden, batch_first=True)
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(self.seq, name + "_l0").data.copy_(getattr(self.cell, name).data)

    def forward(self, x, h):
        if self.how == "seq":
            state = h.unsqueeze(0) if self.kind == "gru" else (h.unsqueeze(0), torch.zeros_like(h).unsqueeze(0))
            h = self.seq(x.unsqueeze(1), state)[0].squeeze(1)
        elif self.kind == "lstm":
            h = self.cell(x, (h, torch.zeros_like(h)))[0]
        else:
            h = self.cell(x, h)
        return self.fc(h)


class GatedLinear(nn.Module):
    """A near miss: torch.chunk of a Linear's output into two halves, one gating the other."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 64)

    def forward(self, x, h):
        a, b = torch.chunk(self.fc(x), 2, dim=1)
        return a * torch.sigmoid(b) + h


IO = dict(input_names=["in0", "in1"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)


def cases():
    x, h = randn(1, 16), randn(1, 32)
    yield Case("gru-cell", seeded(Cell), (x, h), **IO)
    yield Case("gru-seq", seeded(Cell, "gru", "seq"), (x, h), rewrites="gru-cell", trigger=False, **IO)
    # Control: the same shapes through a chunk pnnx converts.
    yield Case("gated-linear", seeded(GatedLinear), (x, h), trigger=False, **IO)


def variants():
    x, h = randn(1, 16), randn(1, 32)
    yield Case("lstm-cell", seeded(Cell, "lstm"), (x, h), **IO)
    yield Case("gru-cell-hidden-64", seeded(Cell, "gru", "cell", 64), (x, randn(1, 64)), **IO)
    yield Case("gru-cell-batch-2", seeded(Cell), (randn(2, 16), randn(2, 32)), **IO)
    yield Case("lstm-cell-batch-2", seeded(Cell, "lstm"), (randn(2, 16), randn(2, 32)), **IO)
    yield Case("rnn-cell-near-miss", seeded(Cell, "rnn"), (x, h), **IO)
    yield Case("gated-linear-near-miss", seeded(GatedLinear), (x, h), **IO)
    yield Case("gru-seq-near-miss", seeded(Cell, "gru", "seq"), (x, h), **IO)
    yield Case("lstm-seq-near-miss", seeded(Cell, "lstm", "seq"), (x, h), **IO)
