"""KB076: on ncnn's ARM CPU path, where the CPU has fp16 arithmetic (ARMv8.2 and newer: asimdhp), ncnn stores and
computes activations in fp16 by default, so an intermediate value past 65504 (fp16's largest finite number) becomes
inf, and NaN (or 0) after the next layer. The same .param/.bin is right on ARMv8.0 and on x86. Every weight here is
small (|w| < 1): this is about activations, not KB056's weights past 65504. The models are KB075's (the same
mechanism on the Vulkan GPU)."""


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
    # Features of about 100: x * x reaches 1e5 and the sum over 64 of them 7.8e5; the result is under 1000.
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
    # q @ k^T of features of about 40 over 64 channels: the diagonal reaches 1e5 before the division by 8.
    yield Case("attention-scores", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("rmsnorm", RMSNorm(), features(100.0), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("vit-block-massive", ViTBlock().eval(), residual_stream(1e5), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)


def variants():
    # Names ending in -opset13 / -opset17 / -dynamo / -onnxsim are converted by pnnx from the ONNX export, names
    # ending in -onnx2ncnn by onnx2ncnn, the rest by pnnx from TorchScript. All run on an emulated Cortex-A76.
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
    yield Case("attention-scores", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("attention-scores-dynamo", AttentionScores(), features(40.0), ["in0"], ["out0"], opset=18,
               dynamo=True)
    # A ViT block whose residual stream carries one channel of 1e5.
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
    yield Case("vit-block-in-range", ViTBlock().eval(), residual_stream(3e4), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)
    yield Case("l2-norm-small-onnx2ncnn", L2Norm(), features(10.0), ["in0"], ["out0"], opset=11, dynamo=False)
