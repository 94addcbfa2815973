"""Child side of scanning a torch.export program: export it to ONNX, as its user would.

Runs in a child process (kb.child.run_function): importing torch costs seconds and memory the
parent never needs for an ONNX file.
"""

from __future__ import annotations


def to_onnx(program: str, out: str) -> str:
    import torch

    ep = torch.export.load(program)
    # The exporter's defaults (dynamo, optimizer on) give the graph a user exporting this program gets;
    # e.g. the optimizer folds a BatchNorm into the ConvTranspose before it, so KB002 cannot occur.
    torch.onnx.export(ep, f=out, dynamo=True)
    return out
