import torch
from torch import nn
from kb.export import Case

A = torch.tensor([6.0, 9, 12, 15, 21, -6, 10, 7])
B = torch.tensor([3.0, 3, 3, 3, 3, 3, 5, 7])


class Div(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, a, b):
        return self.fn(a, b)


def cases():
    yield Case("floordiv", Div(lambda a, b: torch.div(a, b, rounding_mode="floor")), (A, B), dynamo=False, ways=True)
    yield Case("true-div", Div(lambda a, b: a / b), (A, B), dynamo=False, trigger=False)


def variants():
    yield Case("floor-of-div", Div(lambda a, b: torch.floor(a / b)), (A, B), dynamo=False)
    yield Case("floordiv-op-dynamo", Div(lambda a, b: a // b), (A, B), dynamo=True)
    yield Case("int64-dynamo", Div(lambda a, b: torch.div(a, b, rounding_mode="floor")), (A.long(), B.long()), dynamo=True)
    # Near miss: int64 inputs through the TorchScript exporter, which writes an integer Div (and Mod), no Floor.
    yield Case("int64-torchscript-near-miss", Div(lambda a, b: torch.div(a, b, rounding_mode="floor")), (A.long(), B.long()), dynamo=False)
