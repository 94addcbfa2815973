from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["not-supported", "not-registered", "einsum-load-param"]
# GridSample loads (ncnn has the layer) and runs with its default parameters: the wrong values are the failure.
GRID_BUG = ["gridsample-wrong-values", *BUG]
GRID = ("in0", "in1")
TOPK = ("out0", "out1")


# ---- the bug: onnx2ncnn, then the ncnn runtime ----------------------------------------------------

@checks.bug("onnx2ncnn", GRID_BUG, needs=["ncnn"])
def onnx2ncnn_grid_sample(s):
    """F.grid_sample(x, grid, align_corners=True), opset 16."""
    return s.onnx2ncnn.run("grid-sample", inputs=GRID)


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_einsum(s):
    """torch.einsum('imjk,injk->imn', attention, features), the bilinear pooling of Tencent/ncnn#2065."""
    return s.onnx2ncnn.run("einsum")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_tile(s):
    """x.repeat(1, 2, 1, 1) after onnxsim: one Tile."""
    return s.onnx2ncnn.run("tile")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_cumsum(s):
    return s.onnx2ncnn.run("cumsum")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_topk(s):
    return s.onnx2ncnn.run("topk", outputs=TOPK)


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_scatter_nd(s):
    """y = x.clone(); y[:, 1:3] = 0.5, after onnxsim: one ScatterND."""
    return s.onnx2ncnn.run("scatter-nd")


MASK = ("in0", "in1")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_padding_mask(s):
    """BERT-style padding mask: scores.masked_fill(mask == 0, -inf), after onnxsim: Equal and Where."""
    return s.onnx2ncnn.run("padding-mask", inputs=MASK)


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_causal_mask(s):
    """nanoGPT's causal mask: scores.masked_fill(bias[:, :T, :T] == 0, -inf); the exporter folds the Equal, the
    Where on the scores stays."""
    return s.onnx2ncnn.run("causal-mask")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_global_expand(s):
    """A global feature expanded to every token (g.expand(-1, T, -1)) and concatenated, after onnxsim: Expand."""
    return s.onnx2ncnn.run("global-expand")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_arange_position(s):
    """x + sin(torch.arange(x.size(1))[:, None] * 0.1) with a variable sequence axis: Shape, Cast, Range."""
    return s.onnx2ncnn.run("arange-position")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_triu(s):
    return s.onnx2ncnn.run("triu")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_round(s):
    return s.onnx2ncnn.run("round")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_fmod(s):
    """torch.fmod(x, 0.7): Mod with fmod=1."""
    return s.onnx2ncnn.run("fmod")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_scatter_elements(s):
    """x.scatter(1, index, rows), after onnxsim: ScatterElements."""
    return s.onnx2ncnn.run("scatter-elements")


@checks.bug("onnx2ncnn", BUG, needs=["ncnn"])
def onnx2ncnn_nonzero(s):
    """torch.nonzero(x > 0.5): Greater, NonZero, Cast."""
    return s.onnx2ncnn.run("nonzero")


# ---- controls: the same path, models onnx2ncnn converts ------------------------------------------

@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_grid_sample_defaults(s):
    """grid_sample with bilinear, zeros, align_corners=False: onnx2ncnn still prints 'GridSample not supported
    yet!', but ncnn's GridSample defaults are these three, so the pass-through layer computes the right values."""
    return s.onnx2ncnn.run("grid-sample-defaults", inputs=GRID)


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_gelu_erf(s):
    """Exact GELU (Erf), the op of Tencent/ncnn#4952: converted by the onnx2ncnn measured."""
    return s.onnx2ncnn.run("gelu-erf")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_sign(s):
    """torch.sign, the op of Tencent/ncnn#4726: converted to a UnaryOp by the onnx2ncnn measured."""
    return s.onnx2ncnn.run("sign")


@checks.control("onnx2ncnn", needs=["ncnn"])
def onnx2ncnn_pad_replicate(s):
    """F.pad(mode='replicate') after onnxsim: Pad mode=edge, converted to Padding."""
    return s.onnx2ncnn.run("pad-replicate")


# ---- the workaround: pnnx -------------------------------------------------------------------------

@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_grid_sample(s):
    """pnnx from the traced TorchScript (torch.jit.trace(model, (x, grid)).save(...)), then the ncnn runtime."""
    return s.pnnx.to_ncnn("grid-sample", source="torchscript", inputs=GRID)


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_onnx_grid_sample(s):
    return s.pnnx.to_ncnn("grid-sample", source="onnx", inputs=GRID)


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_einsum(s):
    return s.pnnx.to_ncnn("einsum", source="torchscript")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_onnx_einsum(s):
    return s.pnnx.to_ncnn("einsum", source="onnx")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_tile(s):
    return s.pnnx.to_ncnn("tile", source="torchscript")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_cumsum(s):
    return s.pnnx.to_ncnn("cumsum", source="torchscript")


@checks.workaround("onnx2ncnn", "einsum-as-matmul", needs=["ncnn"])
def onnx2ncnn_einsum_as_matmul(s):
    """'imjk,injk->imn' written as matmul(a.flatten(2), x.flatten(2).transpose(1, 2)), exported with onnxsim."""
    return s.onnx2ncnn.run("einsum-as-matmul")


@checks.workaround("onnx2ncnn", "concat-slices", needs=["ncnn"])
def onnx2ncnn_slice_assign_as_cat(s):
    """y[:, 1:3] = 0.5 written as torch.cat of x's slices and a constant block: Crop and Concat, no ScatterND."""
    return s.onnx2ncnn.run("slice-assign-as-cat")


@checks.workaround("onnx2ncnn", "additive-mask", needs=["ncnn"])
def onnx2ncnn_padding_mask_additive(s):
    """The padding mask added as (1 - mask) * -10000 (HF's extended attention mask): Sub, Mul, Add."""
    return s.onnx2ncnn.run("padding-mask-additive", inputs=MASK)


@checks.workaround("onnx2ncnn", "additive-mask", needs=["ncnn"])
def onnx2ncnn_causal_mask_additive(s):
    """The causal mask added as triu(full((T, T), -inf), 1), exported with onnxsim, which folds it to a constant."""
    return s.onnx2ncnn.run("causal-mask-additive")


@checks.workaround("onnx2ncnn", "rewrite-elementwise", needs=["ncnn"])
def onnx2ncnn_global_expand_as_add(s):
    """g.expand(-1, T, -1) written as g + zeros(1, T, D): a broadcasting Add."""
    return s.onnx2ncnn.run("global-expand-as-add")


@checks.workaround("onnx2ncnn", "fixed-shape", needs=["ncnn"])
def onnx2ncnn_arange_position_fixed(s):
    """The same model exported without a variable axis and run through onnxsim: the arange is a constant."""
    return s.onnx2ncnn.run("arange-position-fixed")


@checks.workaround("onnx2ncnn", "rewrite-elementwise", needs=["ncnn"])
def onnx2ncnn_triu_as_mul(s):
    return s.onnx2ncnn.run("triu-as-mul")


@checks.workaround("onnx2ncnn", "rewrite-elementwise", needs=["ncnn"])
def onnx2ncnn_round_as_floor(s):
    """floor(x + 0.5) instead of round(x): the same except at exact ties (.5), which torch rounds to even."""
    return s.onnx2ncnn.run("round-as-floor")


@checks.workaround("onnx2ncnn", "rewrite-elementwise", needs=["ncnn"])
def onnx2ncnn_fmod_as_floor(s):
    """fmod(x, c) written as x - sign(x / c) * floor(abs(x / c)) * c."""
    return s.onnx2ncnn.run("fmod-as-floor")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_round(s):
    return s.pnnx.to_ncnn("round", source="torchscript")


@checks.workaround("pnnx", "pnnx", needs=["ncnn"])
def pnnx_torchscript_fmod(s):
    return s.pnnx.to_ncnn("fmod", source="torchscript")


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
