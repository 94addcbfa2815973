"""KB095: a model with data-dependent control flow (torch.jit.script `if` / `for` / `while`, or torch.cond)
exports to ONNX If / Loop; mnnconvert keeps them as subgraphs, which MNN's Session API cannot resize.
The Module API (MNN.nn.load_module_from_file) runs the same .mnn file."""

from typing import List

import torch
from torch import nn

from kb.export import Case


class Branch(nn.Module):
    """Conv, then a branch on the feature's mean (an early exit or a mode switch): ONNX If."""

    def __init__(self, threshold=0.0, reshape=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.threshold, self.reshape = threshold, reshape

    def forward(self, x):
        y = self.conv(x)
        if bool(y.mean() > self.threshold):
            y = torch.relu(y)
            if self.reshape:  # the branches give outputs of different shapes
                y = y[:, :4]
        else:
            y = torch.tanh(y) * 2
        return y


class Refine(nn.Module):
    """A refinement loop: `for` with a data-dependent count, or `while` until the residual is small: ONNX Loop."""

    def __init__(self, kind="for", steps=None):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.kind, self.steps = kind, steps

    def forward(self, x):
        y = x
        if self.kind == "while":
            while bool(y.abs().max() > 0.5):
                y = y * 0.5
            return self.conv(y)
        if self.kind == "const":  # a constant count: the exporter unrolls it, no Loop
            for _ in range(3):
                y = torch.relu(self.conv(y)) + y
            return y
        n = int((x.abs().mean() * 4).long())
        if self.kind == "stack":  # one output per step, stacked: Loop, SequenceInsert, ConcatFromSequence
            outs: List[torch.Tensor] = []
            for _ in range(n):
                y = torch.sigmoid(self.conv(y))
                outs.append(y)
            return torch.stack(outs, 0)
        for _ in range(n):
            if self.kind == "for-if":  # a branch inside the loop
                if bool(y.mean() > 0):
                    y = y - 1
                else:
                    y = y + 2
            else:
                y = torch.relu(self.conv(y)) + y
        return y


class Cond(Branch):
    """The same branch written with torch.cond, for the dynamo exporter."""

    def forward(self, x):
        y = self.conv(x)
        return torch.cond(y.mean() > 0, lambda t: torch.relu(t), lambda t: torch.tanh(t) * 2, (y,))


def script(cls, seed=0, **kw):
    torch.manual_seed(seed)
    return torch.jit.script(cls(**kw).eval())


def eager(cls, seed=0, **kw):
    torch.manual_seed(seed)
    return cls(**kw).eval()


def image(seed=1):
    torch.manual_seed(seed)
    return torch.randn(1, 3, 16, 16)


def cases():
    x = image()
    yield Case("if", script(Branch), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("loop", script(Refine, kind="while"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    # Control: the same Branch traced, not scripted: tracing keeps the branch this input takes, no If.
    yield Case("if-traced", eager(Branch), (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False)


def variants():
    x = image(seed=2)
    yield Case("if-else-taken", script(Branch, seed=3, threshold=5.0), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("if-shapes-differ", script(Branch, seed=3, reshape=True), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("if-opset13", script(Branch, seed=3), (x,), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("if-onnxsim", script(Branch, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("cond-dynamo", eager(Cond, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("for-count", script(Refine, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("for-stack", script(Refine, seed=3, kind="stack"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("for-if", script(Refine, seed=3, kind="for-if"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("while-onnxsim", script(Refine, seed=3, kind="while"), (x,), ["x"], ["y"], opset=17, dynamo=False,
               simplify=True)
    # Near misses: a constant loop count (the exporter unrolls it) and a traced branch: no If, no Loop.
    yield Case("for-constant-near-miss", script(Refine, seed=3, kind="const"), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("if-traced-near-miss", eager(Branch, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
