"""Small hand-written models that keep the op structure of real architecture families.

timm and torchvision cannot be imported here, so each family is written out: random weights, small
widths, but the same layers, in the same order, written the same way as the reference code (the
docstrings name it). One module per architecture family; each builder returns a `Model`: the module,
example inputs, their names and the output names. `FAMILIES` below lists them; `kind` tells the
exporter which extra variants apply ("cnn": onnxruntime quantization; "rnn": MNN offline
quantization, as for "cnn"). export.py reads the names in FAMILIES without importing torch: keep it
a dict literal of string keys.
"""

from __future__ import annotations

from typing import Callable

from .audio import conformer, wavenet_tcn
from .base import Model
from .codec import dac, encodec
from .cnn import mobilenetv2, resnet, resnet_preproc, yolo
from .convnext import _neck_ln, convnext, convnextv2, sam_neck
from .deconv import deconv_decoder, deconv_decoder_scale_left
from .detr import detr_decoder
from .diffusion import _custom, unet_groupnorm
from .llm import gpt_neox, llama_rmsnorm, t5_rmsnorm_ff
from .mobile import efficientnet_b0, mobilenetv3, shufflenetv2
from .mobileformer import efficientformer, mobilevitv2
from .mobilevit import mobilevit
from .ocr import crnn
from .rnn import _rnn
from .rtdetr import rtdetr_encoder
from .vit import swin, vit

__all__ = ["FAMILIES", "HELD_OUT", "Model", "build"]

# name -> (builder, kind). kind "cnn": also quantized with onnxruntime and mnnquant; "rnn": mnnquant.
FAMILIES: dict[str, tuple[Callable[[], Model], str]] = {
    "resnet": (resnet, "cnn"),
    "resnet-preproc": (resnet_preproc, "cnn"),
    "mobilenetv2": (mobilenetv2, "cnn"),
    "yolo": (yolo, "cnn"),
    "convnext": (convnext, "cnn"),
    "convnextv2": (convnextv2, "other"),
    "sam-neck": (sam_neck, "other"),
    "neck-ln-square": (_neck_ln("square"), "other"),
    "neck-ln-mul": (_neck_ln("mul"), "other"),
    "neck-ln-var": (_neck_ln("var"), "other"),
    "vit": (vit, "cnn"),
    "swin": (swin, "other"),
    "unet-groupnorm": (unet_groupnorm, "cnn"),
    "decoder-custom-direct": (_custom("direct"), "other"),
    "decoder-custom-scaled": (_custom("scaled"), "other"),
    "decoder-custom-residual": (_custom("residual"), "other"),
    "decoder-custom-same": (_custom("same"), "other"),
    "decoder-custom-batchnorm": (_custom("batchnorm"), "other"),
    "gru-1l-h0": (_rnn("gru", 1, "input"), "rnn"),
    "gru-1l-nostate": (_rnn("gru", 1, "none"), "rnn"),
    "gru-2l-h0": (_rnn("gru", 2, "input"), "rnn"),
    "gru-1l-h0-unsqueeze": (_rnn("gru", 1, "unsqueeze"), "rnn"),
    "lstm-1l-h0c0": (_rnn("lstm", 1, "input"), "rnn"),
    "lstm-1l-nostate": (_rnn("lstm", 1, "none"), "rnn"),
    "lstm-2l-h0c0": (_rnn("lstm", 2, "input"), "rnn"),
    "llama-rmsnorm": (llama_rmsnorm, "other"),
    "t5-rmsnorm-ff": (t5_rmsnorm_ff, "other"),
    "deconv-decoder": (deconv_decoder, "cnn"),
    "deconv-decoder-scale-left": (deconv_decoder_scale_left, "other"),
    "efficientnet-b0": (efficientnet_b0, "cnn"),
    "mobilenetv3": (mobilenetv3, "cnn"),
    "shufflenetv2": (shufflenetv2, "cnn"),
    "wavenet-tcn": (wavenet_tcn, "cnn"),
    "crnn": (crnn, "rnn"),
    "mobilevit": (mobilevit, "other"),
    "conformer": (conformer, "other"),
    "detr-decoder": (detr_decoder, "other"),
    "encodec": (encodec, "rnn"),
    "dac": (dac, "other"),
    "rtdetr-encoder": (rtdetr_encoder, "other"),
    "mobilevitv2": (mobilevitv2, "cnn"),
    "efficientformer": (efficientformer, "other"),
    "gpt-neox": (gpt_neox, "other"),
}

# families added after the trigger patterns were tuned (audio, detr, mobile, mobilevit, ocr; then codec,
# rtdetr, mobileformer, gpt-neox, written for issue 29 without looking at the triggers): the bench reports
# them apart
HELD_OUT = frozenset({"efficientnet-b0", "mobilenetv3", "shufflenetv2", "wavenet-tcn", "crnn", "mobilevit",
                      "conformer", "detr-decoder", "encodec", "dac", "rtdetr-encoder", "mobilevitv2",
                      "efficientformer", "gpt-neox"})


def build(name: str) -> Model:
    """The family's model, with weights seeded by its name (the same on every run)."""
    import zlib

    import torch

    torch.manual_seed(zlib.crc32(name.encode()))
    return FAMILIES[name][0]()
