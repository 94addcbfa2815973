"""KB122: ncnn's InnerProduct drops the row axis of a 2-D input with one row (Tencent/ncnn#4728)."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Rows(nn.Module):
    """nn.Linear on a (1, 8) input, then a concat along the row axis, which shows the output's rank."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = self.fc(x)
        return torch.cat([y, y * 2], dim=0)


def cases():
    yield Case("linear-cat", seeded(Rows), (randn(1, 8),), opset=17, dynamo=False, torchscript=True, ways=True)
