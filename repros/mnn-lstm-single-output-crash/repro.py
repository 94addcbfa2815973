"""KB064: mnnconvert (MNN 3.4 and later) dies with SIGSEGV on an ONNX LSTM node that has only its first output,
Y, which is what torch.onnx.export(dynamo=True) writes for `y, _ = lstm(x); return y`. The While rewrite of
the LSTM names three outputs after the node's own, reading past the one it has."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case

T, F, H = 6, 12, 16  # sequence length, features, hidden size


class Net(nn.Module):
    """Linear -> LSTM -> Linear over every step; only the sequence output y of the LSTM is used."""

    def __init__(self, layers=1, bidirectional=False, bias=True, batch_first=True, kind="lstm", states="none"):
        super().__init__()
        self.batch_first, self.states = batch_first, states
        self.fc_in = nn.Linear(F, H)
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.rnn = rnn(H, H, num_layers=layers, bidirectional=bidirectional, bias=bias, batch_first=batch_first)
        self.fc_out = nn.Linear(H * (2 if bidirectional else 1), 8)

    def forward(self, x, *state):
        z = torch.tanh(self.fc_in(x))
        seq, last = self.rnn(z, (state[0], state[1])) if state else self.rnn(z)
        y = self.fc_out(seq)
        if self.states == "all":  # the workaround: every LSTM output is a model output, so none is dropped
            return (y, *last)
        if self.states == "h":
            return y, last[0]
        return y


class Classifier(nn.Module):
    """A sequence classifier as users write it: the LSTM's last step, then a Linear head."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(F, H, batch_first=True)
        self.head = nn.Linear(H, 5)

    def forward(self, x):
        seq, _ = self.rnn(x)
        return self.head(seq[:, -1])


class Unrolled(nn.Module):
    """An LSTMCell stepped over the sequence in Python: MatMul, Sigmoid and Tanh, no LSTM node."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(F, H)
        self.fc_out = nn.Linear(H, 8)

    def forward(self, x):
        h = c = torch.zeros(1, H)
        outs = []
        for t in range(T):
            h, c = self.cell(x[:, t], (h, c))
            outs.append(h)
        return self.fc_out(torch.stack(outs, 1))


def seq(batch_first=True, seed=1):
    torch.manual_seed(seed)
    return torch.randn(1, T, F) if batch_first else torch.randn(T, 1, F)


def states(layers=1, dirs=1, seed=2):
    torch.manual_seed(seed)
    return tuple(torch.randn(layers * dirs, 1, H) * 0.5 for _ in range(2))


def cases():
    x = seq()
    model = seeded(Net)
    yield Case("lstm", model, (x,), ["x"], ["y"], opset=18, dynamo=True)
    # Workarounds, same weights and input: the TorchScript exporter (LSTM with its three outputs, Y_h and
    # Y_c unused), and returning the final states too (dynamo then keeps all three outputs).
    yield Case("lstm-torchscript", model, (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False,
               rewrites="lstm")
    torch.manual_seed(0)
    all_states = seeded(Net, states="all")
    all_states.load_state_dict(model.state_dict())
    yield Case("lstm-return-states", all_states, (x,), ["x"], ["y", "h", "c"], opset=18, dynamo=True,
               trigger=False, rewrites="lstm")
    # Control on the same path: a GRU exported by dynamo has one output too, and converts.
    yield Case("gru", seeded(Net, kind="gru"), (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False)


def variants():
    x = seq()
    yield Case("opset18", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("opset20", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=20, dynamo=True)
    yield Case("seq-first", seeded(Net, seed=3, batch_first=False), (seq(False),), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("bidirectional", seeded(Net, seed=3, bidirectional=True), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("two-layers", seeded(Net, seed=3, layers=2), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("bias-false", seeded(Net, seed=3, bias=False), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("state-inputs", seeded(Net, seed=3), (x, *states()), ["x", "h0", "c0"], ["y"], opset=18, dynamo=True)
    yield Case("onnxsim", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True, simplify=True)
    torch.manual_seed(4)
    yield Case("classifier", Classifier(), (x,), ["x"], ["logits"], opset=18, dynamo=True)
    # Two of the three outputs (y and the final h) is not enough either.
    yield Case("return-h", seeded(Net, seed=3, states="h"), (x,), ["x"], ["y", "h"], opset=18, dynamo=True)
    # Near misses: the TorchScript export (the LSTM keeps Y, Y_h, Y_c; its initial states are computed by
    # Expand), the same after onnxsim, a GRU with one output, an LSTMCell stepped in Python (no LSTM node).
    yield Case("torchscript-near-miss", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("torchscript-onnxsim-near-miss", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False,
               simplify=True)
    yield Case("gru-near-miss", seeded(Net, seed=3, kind="gru"), (x,), ["x"], ["y"], opset=18, dynamo=True)
    torch.manual_seed(5)
    yield Case("lstm-cell-near-miss", Unrolled(), (x,), ["x"], ["y"], opset=18, dynamo=True)
