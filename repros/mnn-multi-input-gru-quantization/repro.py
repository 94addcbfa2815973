"""known-bug: alibaba/MNN#3073 -- offline quantization (mnnquant) of a two-input GRU model fails."""

import torch
from torch import nn

from kb.export import Case

T, F, H, O = 8, 16, 32, 8  # sequence length, features, hidden size, outputs


class Net(nn.Module):
    """A sequence and the GRU's hidden state come in as two model inputs, as in streaming models."""

    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(F, H)
        self.gru = nn.GRU(H, H, num_layers=1, batch_first=True)
        self.fc_out = nn.Linear(H, O)

    def forward(self, x, h0):
        seq, hn = self.gru(torch.relu(self.fc_in(x)), h0)
        return self.fc_out(seq), hn


def cases():
    torch.manual_seed(0)
    x, h0 = torch.randn(1, T, F), torch.randn(1, 1, H) * 0.5
    yield Case("gru", Net(), (x, h0), ["x", "h0"], ["y", "hn"], opset=14, dynamo=False)


class Recurrent(nn.Module):
    """The shapes real sequence models take: GRU or LSTM, layers, state as input or not, ops on it."""

    def __init__(self, kind="gru", layers=1, state="input", conv=False):
        super().__init__()
        self.kind, self.state = kind, state
        self.fc_in = nn.Linear(F, H)
        if conv:  # the near miss: a temporal convolution instead of a recurrent layer
            self.rnn = None
            self.conv = nn.Conv1d(H, H, 3, padding=1)
        else:
            self.rnn = (nn.GRU if kind == "gru" else nn.LSTM)(H, H, num_layers=layers, batch_first=True)
        self.fc_out = nn.Linear(H, O)

    def forward(self, x, *state):
        z = torch.relu(self.fc_in(x))
        if self.rnn is None:
            return self.fc_out(self.conv(z.transpose(1, 2)).transpose(1, 2))
        if self.state == "unsqueeze":  # a (B, H) state made (1, B, H) inside the model
            state = tuple(s.unsqueeze(0) for s in state)
        if self.state == "slice":  # one state tensor for several layers, sliced inside the model
            state = (state[0][: self.rnn.num_layers],)
        if self.kind == "lstm" and state:
            seq, _ = self.rnn(z, (state[0], state[1]))
        else:
            seq, _ = self.rnn(z, *state)
        return self.fc_out(seq)


def variant(name, model, state_shapes=(), opset=14, dynamo=False, **kw):
    torch.manual_seed(1)
    x = torch.randn(1, T, F)
    states = tuple(torch.randn(*s) * 0.5 for s in state_shapes)
    names = ["x"] + [f"s{i}" for i in range(len(states))]
    return Case(name, model, (x, *states), names, ["y"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(0)
    yield variant("gru-state-input", Recurrent("gru"), [(1, 1, H)])
    yield variant("gru-single-input", Recurrent("gru", state=None))
    yield variant("gru-two-layers", Recurrent("gru", layers=2, state=None))
    yield variant("gru-state-unsqueeze", Recurrent("gru", state="unsqueeze"), [(1, H)])
    yield variant("gru-state-slice", Recurrent("gru", layers=1, state="slice"), [(2, 1, H)])
    yield variant("gru-opset17", Recurrent("gru", state=None), opset=17)
    yield variant("gru-onnxsim", Recurrent("gru", state=None), simplify=True)
    yield variant("lstm-h0-c0", Recurrent("lstm"), [(1, 1, H), (1, 1, H)])
    yield variant("lstm-single-input", Recurrent("lstm", state=None))
    yield variant("gru-dynamo", Recurrent("gru", state=None), opset=18, dynamo=True)
    yield variant("conv1d-near-miss", Recurrent(conv=True))
