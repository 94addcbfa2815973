import torch
import torch.nn.functional as F
from kb.blocks import Fn
from kb.export import Case

X = torch.linspace(-100, 100, 21)


def cases():
    yield Case("softplus", Fn(F.softplus), (X,), dynamo=False,
               ways=["opset11", "opset15", "opset17", "opset18", "opset13-onnxsim", "opset17-onnxsim"])
    yield Case("stable-form", Fn(lambda t: torch.relu(t) + torch.log1p(torch.exp(-t.abs()))), (X,), dynamo=False,
               trigger=False, rewrites="softplus")


def variants():
    yield Case("softplus-beta2", torch.nn.Softplus(beta=2), (X,), dynamo=False)
    yield Case("scaled-softplus", Fn(lambda t: F.softplus(t * 3)), (X,), opset=17, dynamo=False)
