"""KB158: Tencent/ncnn#3861's "special case". A batch_first nn.LSTM(10, 10) is fed x.permute(1, 0, 2) of a
(1, 10, 10) input, with h0 and c0 of (1, 10, 10): in torch a batch of 10 sequences of one step each. pnnx folds
the permute into the LSTM's input and writes one ncnn LSTM layer; a program that feeds the (10, 10) input and states
as plain 2-D Mats (no batch axis) gets one sequence of 10 steps instead: the first output row matches torch, the
others are chained through the state, and the final h and c have one row and nine rows of zeros."""

import torch
from torch import nn

from kb.blocks import randn
from kb.export import Case

H = 10


class PermutedLstm(nn.Module):
    """The thread's model: the input permuted (1, 0, 2) before a batch_first LSTM; the states are inputs."""

    def __init__(self, kind="lstm", hidden=H, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.kind = kind
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[kind](H, hidden, batch_first=True)

    def forward(self, x, h, c=None):
        x = x.permute(1, 0, 2)
        if self.kind == "gru":
            y, oh = self.rnn(x, h)
            return y, oh
        y, (oh, oc) = self.rnn(x, (h, c))
        return y, oh, oc


class TransposedLstm(PermutedLstm):
    """The same batch of one-step sequences from transpose(0, 1)."""

    def forward(self, x, h, c):
        y, (oh, oc) = self.rnn(x.transpose(0, 1), (h, c))
        return y, oh, oc


class SequenceLstm(PermutedLstm):
    """Control: no permute, so the input is one sequence of 10 steps (batch 1), the states (1, 1, 10)."""

    def forward(self, x, h, c):
        y, (oh, oc) = self.rnn(x, (h, c))
        return y, oh, oc


class CellByHand(nn.Module):
    """The workaround: the one step an LSTM takes here, written as two Linears, sigmoid and tanh on the (10, 10)
    rows, with the LSTM's own weights (torch's gate order i, f, g, o). The batch stays rows of a matrix."""

    def __init__(self, lstm: nn.LSTM):
        super().__init__()
        self.ih, self.hh = nn.Linear(H, 4 * H), nn.Linear(H, 4 * H)
        with torch.no_grad():
            self.ih.weight.copy_(lstm.weight_ih_l0), self.ih.bias.copy_(lstm.bias_ih_l0)
            self.hh.weight.copy_(lstm.weight_hh_l0), self.hh.bias.copy_(lstm.bias_hh_l0)

    def forward(self, x, h, c):
        g = self.ih(x[0]) + self.hh(h[0])
        i, f = torch.sigmoid(g[:, 0:H]), torch.sigmoid(g[:, H:2 * H])
        cand, o = torch.tanh(g[:, 2 * H:3 * H]), torch.sigmoid(g[:, 3 * H:4 * H])
        c1 = f * c[0] + i * cand
        h1 = o * torch.tanh(c1)
        return h1.unsqueeze(1), h1.unsqueeze(0), c1.unsqueeze(0)


IO3 = dict(input_names=["in0", "in1", "in2"], output_names=["out0", "out1", "out2"], opset=17, dynamo=False,
           torchscript=True)


def thread_inputs(batch=10, seed=1):
    """The thread's input (i / 100, a ramp) and zero states, as its C++ program fills them."""
    x = (torch.arange(batch * H, dtype=torch.float32) / 100).reshape(1, batch, H)
    return x, torch.zeros(1, batch, H), torch.zeros(1, batch, H)


def cases():
    yield Case("thread-model", PermutedLstm(), thread_inputs(), **IO3)
    # Control: the same LSTM run on one sequence of 10 steps, which ncnn's LSTM is made for.
    yield Case("sequence", SequenceLstm(), (thread_inputs()[0], torch.zeros(1, 1, H), torch.zeros(1, 1, H)),
               trigger=False, **IO3)
    # Workaround: the single step by hand, with the LSTM's weights, judged against thread-model's torch output.
    yield Case("cell-by-hand", CellByHand(PermutedLstm().rnn), thread_inputs(), trigger=False,
               rewrites="thread-model", **IO3)


def variants():
    yield Case("random-states", PermutedLstm(), (randn(1, 10, H), randn(1, 10, H, seed=2), randn(1, 10, H, seed=3)),
               **IO3)
    yield Case("batch-4", PermutedLstm(), thread_inputs(4), **IO3)
    yield Case("hidden-16", PermutedLstm(hidden=16), (randn(1, 10, H), torch.zeros(1, 10, 16),
                                                      torch.zeros(1, 10, 16)), **IO3)
    yield Case("transpose", TransposedLstm(), thread_inputs(), **IO3)
    yield Case("gru", PermutedLstm("gru"), (randn(1, 10, H), torch.zeros(1, 10, H)), input_names=["in0", "in1"],
               output_names=["out0", "out1"], opset=17, dynamo=False, torchscript=True)
    # Near misses: a batch of one, one sequence.
    yield Case("batch-1-near-miss", PermutedLstm(), thread_inputs(1), **IO3)
    yield Case("sequence-random-near-miss", SequenceLstm(), (randn(1, 10, H), randn(1, 1, H, seed=2),
                                                             randn(1, 1, H, seed=3)), **IO3)
