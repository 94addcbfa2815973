"""GRU / LSTM encoders, with and without state inputs."""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from .base import Model


# --------------------------------------------------------------------------------------------------
# GRU / LSTM encoders (batch_first), with and without state inputs
# --------------------------------------------------------------------------------------------------

T, FEAT, HID, OUT = 8, 16, 32, 8


class RNNEncoder(nn.Module):
    """Linear -> ReLU -> GRU/LSTM (batch_first) -> Linear, as streaming ASR/KWS encoders.
    state: "input"     h0 (and c0) are model inputs of shape (layers, B, H)
           "none"      no initial state (zeros)
           "unsqueeze" h0 (and c0) come in as (B, H) and are unsqueezed to (1, B, H)"""

    def __init__(self, cell: str, layers: int, state: str):
        super().__init__()
        self.cell, self.state = cell, state
        self.fc_in = nn.Linear(FEAT, HID)
        self.rnn = (nn.GRU if cell == "gru" else nn.LSTM)(HID, HID, num_layers=layers, batch_first=True)
        self.fc_out = nn.Linear(HID, OUT)

    def forward(self, x, *state):
        x = torch.relu(self.fc_in(x))
        if self.state == "unsqueeze":
            state = tuple(s.unsqueeze(0) for s in state)
        if self.cell == "gru":
            seq, hn = self.rnn(x, state[0]) if state else self.rnn(x)
            return self.fc_out(seq), hn
        seq, (hn, cn) = self.rnn(x, tuple(state)) if state else self.rnn(x)
        return self.fc_out(seq), hn, cn


def _rnn(cell: str, layers: int, state: str) -> Callable[[], Model]:
    def build() -> Model:
        x = torch.randn(1, T, FEAT)
        names, outs = ["x"], ["y", "hn"] + (["cn"] if cell == "lstm" else [])
        inputs = [x]
        if state != "none":
            shape = (1, HID) if state == "unsqueeze" else (layers, 1, HID)
            for s in ("h0",) + (("c0",) if cell == "lstm" else ()):
                inputs.append(torch.randn(*shape) * 0.5)
                names.append(s)
        return Model(RNNEncoder(cell, layers, state).eval(), tuple(inputs), names, outs)
    build.__name__ = f"{cell}_{layers}l_{state}"
    return build
