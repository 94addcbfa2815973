"""KB168: an ONNX Dropout kept in the graph (a training-mode export), converted with mnnconvert --forTraining."""

import torch
from torch import nn
from torch.nn import functional as F

from kb.blocks import randn, seeded
from kb.export import Case

TRAIN = {"training": torch.onnx.TrainingMode.TRAINING, "do_constant_folding": False}


class Mlp(nn.Module):
    """Linear, ReLU, Dropout, Linear: the head most classifiers fine-tuned on device have."""

    def __init__(self, p=0.5, twice=False, last=False):
        super().__init__()
        self.a, self.b = nn.Linear(16, 32), nn.Linear(32, 4)
        self.d, self.twice, self.last = nn.Dropout(p), twice, last

    def forward(self, x):
        y = self.d(torch.relu(self.a(x)))
        y = self.b(self.d(y) if self.twice else y)
        return self.d(y) if self.last else y


class ConvDrop(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 4, 1)
        self.d = nn.Dropout(0.3)

    def forward(self, x):
        return self.b(self.d(torch.relu(self.a(x))))


class FunctionalDrop(nn.Module):
    """F.dropout(training=True) keeps a Dropout node in an export of the model in eval mode too."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(16, 32), nn.Linear(32, 4)

    def forward(self, x):
        return self.b(F.dropout(torch.relu(self.a(x)), 0.2, training=True))


def cases():
    x = randn(2, 16)
    mlp = seeded(Mlp)
    # torch writes Dropout into the ONNX file only in a training-mode export, as users export a model to train on.
    yield Case("train-export", mlp, (x,), opset=13, dynamo=False, export_kwargs=TRAIN)
    # The workaround: the same weights exported in eval mode (no Dropout node), then --forTraining.
    yield Case("eval-export", mlp, (x,), opset=13, dynamo=False, trigger=False, rewrites="train-export")


def variants():
    x = randn(2, 16)
    yield Case("v-opset11", seeded(Mlp), (x,), opset=11, dynamo=False, export_kwargs=TRAIN)
    yield Case("v-opset12", seeded(Mlp), (x,), opset=12, dynamo=False, export_kwargs=TRAIN)
    yield Case("v-opset15", seeded(Mlp), (x,), opset=15, dynamo=False, export_kwargs=TRAIN)
    yield Case("v-opset17", seeded(Mlp), (x,), opset=17, dynamo=False, export_kwargs=TRAIN)
    yield Case("v-opset18", seeded(Mlp), (x,), opset=18, dynamo=False, export_kwargs=TRAIN)
    yield Case("v-conv", seeded(ConvDrop), (randn(1, 3, 8, 8),), opset=13, dynamo=False, export_kwargs=TRAIN)
    yield Case("v-two-dropouts", seeded(Mlp, twice=True), (x,), opset=13, dynamo=False, export_kwargs=TRAIN)
    yield Case("v-ratio-01", seeded(Mlp, p=0.1), (x,), opset=13, dynamo=False, export_kwargs=TRAIN)
    yield Case("v-dropout-last", seeded(Mlp, last=True), (x,), opset=13, dynamo=False, export_kwargs=TRAIN)
    yield Case("v-functional-eval-export", seeded(FunctionalDrop), (x,), opset=13, dynamo=False)
    yield Case("v-eval-export", seeded(Mlp), (x,), opset=13, dynamo=False)
