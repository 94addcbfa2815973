"""The tag vocabulary: about thirty topics a reader browses by, each with the words it absorbed."""

from __future__ import annotations

# tag: (what it groups, the former tags and words merged into it). Engine names are not tags: the
# front matter's `engines` says them. Model names (yolov5, convnext) belong in `synonyms`.
TAGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "silent-wrong-output": ("converts and runs, but the numbers are wrong", ("silent-error",)),
    "nan": ("NaN or inf in the output", ()),
    "fp16": ("half precision storage or arithmetic", ("half", "precision-low")),
    "crash": ("a segfault or an abort", ("abort",)),
    "unsupported-op": ("an op the converter does not convert", ("conversion-failed",)),
    "custom-op": ("ops outside the ONNX domain", ("allowCustomOp",)),
    "quantization": ("int8 post-training quantization", ("int8", "mnnquant", "kl", "ema", "calibration",
                                                         "quantize-dynamic", "accuracy")),
    "qdq": ("QuantizeLinear/DequantizeLinear and QOperator models", ("fake-quantization", "qoperator")),
    "resize": ("Resize, Upsample, interpolate, Interp", ("interpolate", "interp", "upsample", "bilinear",
                                                         "bicubic", "interpolation", "border")),
    "grid-sample": ("grid_sample / GridSample", ("grid_sample", "gridsample")),
    "convolution": ("Conv of any rank, depthwise and grouped", ("conv", "conv1d", "conv3d", "depthwise",
                                                                "grouped")),
    "deconvolution": ("ConvTranspose", ("convtranspose", "output_shape")),
    "normalization": ("BatchNorm, LayerNorm, GroupNorm, InstanceNorm", ("batchnorm", "layernorm", "groupnorm",
                                                                        "norm", "normalize", "std")),
    "reduction": ("Reduce* and global pooling", ("reduce", "reducel1", "reducel2", "reducelogsumexp",
                                                 "reducemean", "reducesum", "global-average-pool",
                                                 "global-average-pooling", "axes-input")),
    "rnn": ("LSTM, GRU, RNN and loops", ("lstm", "gru", "recurrent", "sequence", "while", "control-flow")),
    "attention": ("attention blocks and their masks", ("transformer", "vit", "mask")),
    "slice": ("Slice, strided slicing, Crop", ("strided-slice", "crop", "focus", "space-to-depth",
                                               "indexing")),
    "gather": ("Gather, index_select, embedding lookups", ("index-select",)),
    "layout": ("Reshape, Transpose, Squeeze and axis order", ("permute", "transpose", "reshape", "squeeze",
                                                             "unsqueeze", "expanddims", "channels-last",
                                                             "5d")),
    "batch-axis": ("ncnn's missing batch axis", ()),
    "padding": ("Pad modes", ("reflect", "reflection", "replicate", "circular", "f-pad")),
    "activation": ("activation functions", ("hardswish", "gelu", "softmax", "logsoftmax")),
    "arithmetic": ("elementwise math: rounding, division, pow, comparisons, casts",
                   ("binaryop", "pow", "round", "rounding", "floor-divide", "remainder", "negative",
                    "scalar", "comparison", "equal", "logical-and", "where", "isnan", "cast", "cumsum")),
    "matmul": ("MatMul, Gemm, Linear, Einsum", ("gemm", "linear", "innerproduct", "einsum", "argmax", "topk")),
    "dynamic-shape": ("shapes computed at run time", ("shape", "shape-inference")),
    "opset": ("behaviour that depends on the ONNX opset", ("opset13", "opset14", "opset17", "opset18")),
    "exporter": ("what torch.onnx.export writes (dynamo or TorchScript)", ("dynamo", "torch-onnx-export",
                                                                            "torchscript", "onnx")),
    "onnxsim": ("onnx-simplifier rewrites", ("fusion", "simd")),
    "python-api": ("the engines' Python bindings", ("session", "multi-input")),
    "regression-guard": ("fixed upstream, kept as a guard", ()),
}

ALIASES = {old: tag for tag, (_, olds) in TAGS.items() for old in olds}


def check(tag: str) -> str:
    if tag not in TAGS:
        hint = f"; use {ALIASES[tag]!r}" if tag in ALIASES else f"; one of: {', '.join(TAGS)}"
        raise ValueError(f"unknown tag {tag!r}{hint} (kb/tags.py)")
    return tag
