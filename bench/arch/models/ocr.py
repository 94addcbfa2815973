"""OCR: a CRNN (conv backbone, two bidirectional LSTMs).
Held out: written after the trigger patterns were tuned (models.HELD_OUT)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import Model, _trained_like


# --------------------------------------------------------------------------------------------------
# CRNN for OCR (meijieru/crnn.pytorch): VGG-ish conv backbone with (2, 1)-stride pools down to height 1,
# squeeze(2), permute to (T, B, C), two BidirectionalLSTM (LSTM -> view(T*b, h) -> Linear -> view)
# --------------------------------------------------------------------------------------------------


class BidirectionalLSTM(nn.Module):
    def __init__(self, nin, nhidden, nout):
        super().__init__()
        self.rnn = nn.LSTM(nin, nhidden, bidirectional=True)
        self.embedding = nn.Linear(nhidden * 2, nout)

    def forward(self, x):
        recurrent, _ = self.rnn(x)
        T, b, h = recurrent.size()
        output = self.embedding(recurrent.view(T * b, h))
        return output.view(T, b, -1)


class CRNN(nn.Module):
    def __init__(self, nc=1, classes=12, nh=32, nm=(16, 32, 64, 64, 64, 64, 64)):
        super().__init__()
        ks, ps, ss = [3, 3, 3, 3, 3, 3, 2], [1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1]
        cnn = nn.Sequential()

        def conv_relu(i, bn=False):
            cin = nc if i == 0 else nm[i - 1]
            cnn.add_module(f"conv{i}", nn.Conv2d(cin, nm[i], ks[i], ss[i], ps[i]))
            if bn:
                cnn.add_module(f"batchnorm{i}", nn.BatchNorm2d(nm[i]))
            cnn.add_module(f"relu{i}", nn.ReLU(True))

        conv_relu(0)
        cnn.add_module("pooling0", nn.MaxPool2d(2, 2))
        conv_relu(1)
        cnn.add_module("pooling1", nn.MaxPool2d(2, 2))
        conv_relu(2, True)
        conv_relu(3)
        cnn.add_module("pooling2", nn.MaxPool2d((2, 2), (2, 1), (0, 1)))
        conv_relu(4, True)
        conv_relu(5)
        cnn.add_module("pooling3", nn.MaxPool2d((2, 2), (2, 1), (0, 1)))
        conv_relu(6, True)
        self.cnn = cnn
        self.rnn = nn.Sequential(BidirectionalLSTM(nm[-1], nh, nh), BidirectionalLSTM(nh, nh, classes))

    def forward(self, x):
        conv = self.cnn(x)
        b, c, h, w = conv.size()
        assert h == 1, "the height of conv must be 1"
        conv = conv.squeeze(2).permute(2, 0, 1)  # (w, b, c)
        return F.log_softmax(self.rnn(conv), dim=2)


def crnn() -> Model:
    x = torch.randn(1, 1, 32, 64)
    return Model(_trained_like(CRNN(), x), (x,), ["image"], ["log_probs"])
