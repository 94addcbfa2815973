"""KB217: mnnconvert --saveStaticModel dies of SIGSEGV on a model with an ONNX NonZero (torch.nonzero, as a
SuperPoint-style keypoint head writes it): it prints the output tensors, then crashes and writes no model. Without
the flag the same model converts and MNN's Module API runs it."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Keypoints(nn.Module):
    """A SuperPoint-style detector head: a score map (conv, sigmoid) and the coordinates of the cells above a
    threshold, torch.nonzero(score > t); `how` picks another way to select."""

    def __init__(self, how="nonzero", t=0.6):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)
        self.how, self.t = how, t

    def forward(self, x):
        score = torch.sigmoid(self.conv(x))
        keep = score > self.t
        if self.how == "nonzero":
            return torch.nonzero(keep).float(), score
        if self.how == "nonzero-only":  # the keypoints alone
            return torch.nonzero(keep[0, 0]).float()
        if self.how == "where":  # torch.where with one argument
            return torch.stack(torch.where(keep[0, 0])).float(), score
        if self.how == "mask":  # the scores of the kept cells, by a boolean mask
            return score[keep], score
        if self.how == "unique":
            return torch.unique(torch.floor(score * 4)), score
        if self.how == "dense":  # no NonZero: the selection kept as a dense map
            return torch.where(keep, score, torch.zeros_like(score)), score
        if self.how == "topk":  # no NonZero: a fixed number of best cells
            return torch.topk(score.flatten(1), 8).values, score
        raise ValueError(self.how)


def image(seed=1, n=1):
    return randn(n, 3, 16, 16, seed=seed)


def cases():
    x = image()
    yield Case("superpoint", seeded(Keypoints), (x,), ["x"], ["kp", "sc"], opset=13, dynamo=False,
               ways=["opset11", "opset17", "dynamo", "opset13-onnxsim"])
    # Control: the same head without the NonZero (a dense map of kept scores).
    yield Case("dense", seeded(Keypoints, how="dense"), (x,), ["x"], ["kp", "sc"], opset=13, dynamo=False,
               trigger=False)


def variants():
    x = image(seed=2)
    yield Case("nonzero-only", seeded(Keypoints, seed=3, how="nonzero-only"), (x,), ["x"], ["kp"], opset=13,
               dynamo=False)
    yield Case("where-one-argument", seeded(Keypoints, seed=3, how="where"), (x,), ["x"], ["kp", "sc"], opset=13,
               dynamo=False)
    yield Case("mask", seeded(Keypoints, seed=3, how="mask"), (x,), ["x"], ["kp", "sc"], opset=13, dynamo=False)
    yield Case("unique", seeded(Keypoints, seed=3, how="unique"), (x,), ["x"], ["kp", "sc"], opset=13,
               dynamo=False)
    yield Case("nonzero-batch2", seeded(Keypoints, seed=3), (image(seed=2, n=2),), ["x"], ["kp", "sc"], opset=13,
               dynamo=False)
    # Near misses: shapes that follow from the input's shape alone.
    yield Case("dense-near-miss", seeded(Keypoints, seed=3, how="dense"), (x,), ["x"], ["kp", "sc"], opset=13,
               dynamo=False)
    yield Case("topk-near-miss", seeded(Keypoints, seed=3, how="topk"), (x,), ["x"], ["kp", "sc"], opset=13,
               dynamo=False)
