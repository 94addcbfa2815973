"""KB025: regression guard for alibaba/MNN#2400 -- ONNX LayerNormalization (nn.LayerNorm exported at opset >= 17)."""

import torch
from torch import nn

from kb.export import Case

B, T, D = 1, 8, 32


class LN(nn.Module):
    """nn.LayerNorm over the last dimension(s), as transformers use it."""

    def __init__(self, shape=(D,), **kw):
        super().__init__()
        self.ln = nn.LayerNorm(shape, **kw)
        if getattr(self.ln, "weight", None) is not None:
            with torch.no_grad():  # non-trivial affine parameters, so a dropped weight or bias shows
                self.ln.weight.uniform_(0.5, 1.5)
                if self.ln.bias is not None:
                    self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.ln(x)


class Block(nn.Module):
    """A transformer MLP: Linear -> GELU -> Linear, residual, then LayerNorm."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D, 2 * D), nn.Linear(2 * D, D)
        self.ln = LN()

    def forward(self, x):
        return self.ln(x + self.fc2(nn.functional.gelu(self.fc1(x))))


class ChannelLN(nn.Module):
    """ConvNeXt style: NCHW -> NHWC, LayerNorm over channels, back."""

    def __init__(self, c=16):
        super().__init__()
        self.ln = LN((c,))

    def forward(self, x):
        return self.ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def _x(*shape):
    torch.manual_seed(1)
    return torch.randn(*shape) * 2 + 0.5


def cases():
    torch.manual_seed(0)
    x = _x(B, T, D)
    ln = LN()
    yield Case("ln-opset17", ln, (x,), ["x"], ["y"], opset=17, dynamo=False)
    # The maintainers' suggestion: the same module at a lower opset, where LayerNorm is exported as
    # ReduceMean/Sub/Pow/Sqrt/Div.
    yield Case("ln-opset13", ln, (x,), ["x"], ["y"], opset=13, dynamo=False, trigger=False, rewrites="ln-opset17")


def v(name, model, x, opset=17, dynamo=False, **kw):
    return Case(name, model, (x,), ["x"], ["y"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(0)
    x = _x(B, T, D)
    yield v("last-dim", LN(), x)
    yield v("two-dims", LN((T, D)), x)
    yield v("no-affine", LN(elementwise_affine=False), x)
    yield v("no-bias", LN(bias=False), x)
    yield v("opset18", LN(), x, opset=18)
    yield v("dynamo", LN(), x, opset=18, dynamo=True)
    yield v("onnxsim", LN(), x, simplify=True)
    yield v("transformer-block", Block(), x)
    yield v("channels-permute", ChannelLN(16), _x(1, 16, 6, 6))
    yield v("opset13-decomposed", LN(), x, opset=13)  # near miss: no LayerNormalization node
