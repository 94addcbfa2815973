"""What every family shares: the `Model` a builder returns, and the weight scalings that make a
wrongly computed layer show in the outputs."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class Model:
    module: nn.Module
    inputs: tuple
    input_names: list[str]
    output_names: list[str]
    export_kwargs: dict = field(default_factory=dict)  # for torch.onnx.export(dynamo=False)


def _perturb_norms(module: nn.Module) -> nn.Module:
    """Non-trivial affine parameters and statistics in every norm layer, so a wrongly folded or
    wrongly broadcast norm shows in the outputs (fresh layers are weight 1, bias 0, mean 0, var 1)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm, nn.LayerNorm)) or hasattr(m, "is_norm"):
                if getattr(m, "weight", None) is not None:
                    m.weight.uniform_(0.5, 1.5)
                if getattr(m, "bias", None) is not None:
                    m.bias.uniform_(-0.5, 0.5)
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return module.eval()


def _perturb_norms_1d(module: nn.Module) -> nn.Module:
    """_perturb_norms, plus BatchNorm1d (its affine parameters and running statistics)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return _perturb_norms(module)


def _he_init(m: nn.Module) -> None:
    """He-normal weights (std sqrt(2 / fan_in)), small biases, for a Conv / Linear layer."""
    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
    if m.bias is not None:
        nn.init.uniform_(m.bias, -0.1, 0.1)


def _trained_like(module: nn.Module, example: torch.Tensor, batch: int = 8, steps: int = 2) -> nn.Module:
    """Scales as a trained network has them, so that a wrongly computed early layer shows in the
    outputs (with PyTorch's default init and made-up BatchNorm statistics the signal of a deep CNN
    dies out and the outputs are its last biases, within the bench's 1% tolerance whatever the early
    layers compute): He-normal Conv / Linear weights, _perturb_norms_1d's affine parameters, then
    BatchNorm running statistics measured on random batches shaped like `example`."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Linear)) and not nn.utils.parametrize.is_parametrized(m):
                _he_init(m)
        _perturb_norms_1d(module)
        bns = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # a cumulative average over the steps
        module.train()
        for _ in range(steps):
            module(torch.randn(batch, *example.shape[1:]))
        for m in bns:
            m.momentum = 0.1
    return module.eval()
