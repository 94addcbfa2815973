"""KB153: F.softplus / nn.Softplus with beta != 1 through pnnx. pnnx's ncnn pass maps softplus to ncnn's Softplus
only when beta == 1; otherwise it prints "ignore F.softplus ... param beta=..." and writes the op through, and ncnn
stops at "layer F.softplus not exists or registered". From ONNX, pnnx folds torch's Mul -> Softplus -> Div back
into F.softplus(beta), with the same result."""

import torch.nn.functional as F
from torch import nn

from kb.blocks import ConvThen, Fn, randn, seeded
from kb.export import Case


def softplus(beta, threshold=20.0):
    return Fn(lambda x: F.softplus(x, beta=beta, threshold=threshold))


def rewritten(beta, by="mul"):
    """softplus(x, beta) as softplus(beta * x) / beta: ncnn's Softplus (beta 1) between two scalar ops. by="mul"
    multiplies by 1 / beta (a Mul in ONNX), by="div" divides by beta (the Div torch itself writes)."""
    if by == "mul":
        return Fn(lambda x: F.softplus(x * beta) * (1.0 / beta))
    return Fn(lambda x: F.softplus(x * beta) / beta)


class Tokens(nn.Module):
    """A Linear over tokens, then a softplus with beta (a positive scale or rate head)."""

    def __init__(self, beta):
        super().__init__()
        self.fc, self.beta = nn.Linear(16, 16), beta

    def forward(self, x):
        return F.softplus(self.fc(x), beta=self.beta)


IO = dict(input_names=["in0"], output_names=["out0"], torchscript=True)


def cases():
    x = randn(1, 8, 6, 10)
    yield Case("softplus-beta2", softplus(2.0), (x,), opset=17, dynamo=False, ways=True, **IO)
    # Workarounds: the same function, judged against softplus-beta2's torch output.
    yield Case("rewritten-mul", rewritten(2.0), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="softplus-beta2", **IO)
    # Divides by beta: its ONNX graph is softplus-beta2's own (Mul, Softplus, Div), so it keeps the trigger.
    yield Case("rewritten-div", rewritten(2.0, "div"), (x,), opset=17, dynamo=False,
               rewrites="softplus-beta2", **IO)
    yield Case("softplus-beta1", softplus(1.0), (x,), opset=17, dynamo=False, trigger=False, **IO)


def variants():
    x, tokens = randn(1, 8, 6, 10), randn(1, 8, 16)
    yield Case("beta-half", softplus(0.5), (x,), opset=17, dynamo=False, **IO)
    yield Case("beta-10-threshold-5", softplus(10.0, 5.0), (x,), opset=17, dynamo=False, **IO)
    yield Case("module-beta2", seeded(nn.Softplus, beta=2.0), (x,), opset=17, dynamo=False, **IO)
    # nn.Softplus inside a model: pnnx keeps the module, as nn.Softplus
    yield Case("conv-module-beta2", seeded(lambda: nn.Sequential(nn.Conv2d(8, 8, 1), nn.Softplus(beta=2.0))), (x,),
               opset=17, dynamo=False, **IO)
    yield Case("conv-then-beta2", seeded(lambda: ConvThen(nn.Conv2d(8, 8, 3, padding=1), softplus(2.0))), (x,),
               opset=17, dynamo=False, **IO)
    yield Case("tokens-beta2", seeded(Tokens, 2.0), (tokens,), opset=17, dynamo=False, **IO)
    yield Case("beta1-near-miss", softplus(1.0), (x,), opset=17, dynamo=False, **IO)
    yield Case("beta1-threshold-5-near-miss", softplus(1.0, 5.0), (x,), opset=17, dynamo=False, **IO)
    yield Case("module-beta1-near-miss", seeded(nn.Softplus), (x,), opset=17, dynamo=False, **IO)
    yield Case("conv-module-beta1-near-miss", seeded(lambda: nn.Sequential(nn.Conv2d(8, 8, 1), nn.Softplus())), (x,),
               opset=17, dynamo=False, **IO)
    yield Case("tokens-beta1-near-miss", seeded(Tokens, 1.0), (tokens,), opset=17, dynamo=False, **IO)
    yield Case("mish-near-miss", Fn(lambda x: x * F.softplus(x).tanh()), (x,), opset=17, dynamo=False, **IO)
    yield Case("rewritten-mul-near-miss", rewritten(2.0), (x,), opset=17, dynamo=False, **IO)
