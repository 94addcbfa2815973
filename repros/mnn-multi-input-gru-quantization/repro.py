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
