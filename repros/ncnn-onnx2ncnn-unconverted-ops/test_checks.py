from kb.checks import Checks

checks = Checks(__file__)
BUG = ["not-supported", "not-registered", "einsum-load-param"]
# GridSample loads (ncnn has the layer) and runs with its default parameters: the wrong values are the failure.
GRID_BUG = ["gridsample-wrong-values", *BUG]
GRID = ("in0", "in1")
TOPK = ("out0", "out1")


# ---- the bug: onnx2ncnn, then the ncnn runtime ----------------------------------------------------


MASK = ("in0", "in1")


# ---- controls: the same path, models onnx2ncnn converts ------------------------------------------


# ---- the workaround: pnnx -------------------------------------------------------------------------


# ---- variants -------------------------------------------------------------------------------------

GRID_VARIANTS = ["grid-sample-nearest-opset16", "grid-sample-border-opset17", "grid-sample-align-corners-dynamo",
                 "grid-sample-reflection-onnxsim", "grid-sample-defaults-opset17", "grid-sample-defaults-dynamo"]
VARIANTS = ["flow-warp-block", "einsum-opset17", "einsum-dynamo", "einsum-spatial-onnxsim", "tile-unsimplified",
            "torch-tile-dynamo", "cumsum-opset17", "cumsum-channels-dynamo", "scatter-nd-rows-opset17",
            "scatter-nd-opset13", "einsum-as-matmul-opset17", "repeat-as-cat", "gelu-erf-opset17", "erf-opset13",
            "sign-dynamo"]
TOPK_VARIANTS = ["topk-opset17-onnxsim", "topk-dynamo", "amax-head"]


@checks.variants("onnx2ncnn", GRID_BUG, GRID_VARIANTS, needs=["ncnn"])
def onnx2ncnn_grid(s, case):
    """onnx2ncnn, then the ncnn runtime, fed the image and the grid."""
    return s.onnx2ncnn.run(case, inputs=GRID)


@checks.variants("onnx2ncnn", GRID_BUG, VARIANTS, needs=["ncnn"])
def onnx2ncnn(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)


@checks.variants("onnx2ncnn", BUG, TOPK_VARIANTS, needs=["ncnn"])
def onnx2ncnn_topk_variant(s, case):
    """onnx2ncnn, then the ncnn runtime; top-k values and indices."""
    return s.onnx2ncnn.run(case, outputs=TOPK if case != "amax-head" else ("out0",))


MASK_VARIANTS = ["padding-mask-opset17", "padding-mask-dynamo", "masked-fill-lt-onnxsim", "masked-fill-le-opset17",
                 "torch-where-gt-dynamo", "padding-and-causal-opset17", "sdpa-bool-mask-onnxsim",
                 "padding-additive-opset17"]
DATA_VARIANTS = ["causal-mask-onnxsim", "causal-mask-dynamo", "causal-arange-seq-axis", "isnan-guard-opset13",
                 "nan-to-num-opset17", "arange-position-dynamo", "vit-cls-token-opset17", "global-expand-dynamo",
                 "triu-dynamo", "nonzero-onnxsim", "round-dynamo", "fmod-opset17-onnxsim", "scatter-add-opset13",
                 "causal-additive-dynamo", "vit-cls-token-onnxsim", "round-as-floor-dynamo", "remainder-opset17",
                 "triu-as-mul-opset17"]


@checks.variants("onnx2ncnn", BUG, MASK_VARIANTS, needs=["ncnn"])
def onnx2ncnn_mask_variant(s, case):
    """onnx2ncnn, then the ncnn runtime, fed the tokens and the padding mask."""
    return s.onnx2ncnn.run(case, inputs=MASK)


@checks.variants("onnx2ncnn", BUG, DATA_VARIANTS, needs=["ncnn"])
def onnx2ncnn_data_variant(s, case):
    """onnx2ncnn, then the ncnn runtime."""
    return s.onnx2ncnn.run(case)
