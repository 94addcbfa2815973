"""KB075: on ncnn's Vulkan path, activations are stored (and computed) in fp16 where the device supports it, so an
intermediate value past 65504 (fp16's largest finite number) becomes inf, and NaN after the next layer. The weights
here are all small (|w| < 1): this is about activations, not KB056's weights past 65504."""


from kb.blocks import (
    ONE_FILE,
    AttentionScores,
    L2Norm,
    L2NormRescaled,
    LinalgNorm,
    RMSNorm,
    ScaledSoftmax,
    ViTBlock,
    features,
    residual_stream,
)
from kb.export import Case


def cases():
    # Features of about 100: x * x reaches 1e5 and the sum over 64 of them 8.8e5; the result is at most 940.
    yield Case("l2-norm", L2Norm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    # The rescale workaround: the same input, judged against l2-norm's torch output.
    yield Case("l2-norm-rescaled", L2NormRescaled(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, trigger=False, rewrites="l2-norm")
    # Control: features of about 10, every intermediate under 65504.
    yield Case("l2-norm-small", L2Norm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, trigger=False)
    # Logits of about 1e5 (a logit scale of 1e5 on outputs of about 1).
    yield Case("softmax-logits", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)


def variants():
    # Names ending in -opset13 / -opset17 / -dynamo / -onnxsim are converted by pnnx from the ONNX export, names
    # ending in -onnx2ncnn by onnx2ncnn, the rest by pnnx from TorchScript. All run on the Vulkan device.
    yield Case("l2-norm", L2Norm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("linalg-norm", LinalgNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("rmsnorm", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    # (Not the L2 norm from ONNX: its ReduceSum takes the axes as an input, which pnnx drops, KB022.)
    yield Case("rmsnorm-opset17", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False)
    yield Case("softmax-logits", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("softmax-logits-dynamo", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=18,
               dynamo=True, export_kwargs=ONE_FILE)
    yield Case("softmax-logits-onnxsim", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, simplify=True)
    # q @ k^T of features of about 40 over 64 channels: the diagonal reaches 1e5 before the division by 8.
    yield Case("attention-scores", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("attention-scores-dynamo", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=18,
               dynamo=True)
    # A ViT block whose residual stream carries one channel of 1e5: the LayerNorms handle it in fp32.
    yield Case("vit-block-massive", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("vit-block-massive-opset17", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False)
    # The same models through onnx2ncnn (opset 11: ReduceSum's axes are still an attribute there).
    yield Case("l2-norm-onnx2ncnn", L2Norm(), features(100.0), ["in0"], ["out0"], opset=11, dynamo=False)
    yield Case("softmax-logits-onnx2ncnn", ScaledSoftmax(1e5), features(1.0, d=16), ["in0"], ["out0"], opset=11,
               dynamo=False)
    yield Case("attention-scores-onnx2ncnn", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=11,
               dynamo=False)
    # Near misses: the same models with every intermediate under 65504.
    yield Case("l2-norm-small", L2Norm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("rmsnorm-small", RMSNorm(), features(10.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("softmax-small-logits", ScaledSoftmax(10.0), features(1.0, d=16), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("attention-scores-small", AttentionScores(), features(1.0), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    # Right on ncnn 1.0.20261020 and up to 1.0.20250503; on 1.0.20250916 to 1.0.20260526 its LayerNorm's variance
    # (about 2.8e7) overflows and every output is 0: the page says so.
    yield Case("vit-block-in-range", ViTBlock().eval(), residual_stream(3e4), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("l2-norm-small-onnx2ncnn", L2Norm(), features(10.0), ["in0"], ["out0"], opset=11, dynamo=False)
