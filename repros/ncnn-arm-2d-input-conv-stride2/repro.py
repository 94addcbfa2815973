"""KB178: on an ARM CPU, ncnn runs a first 3x3 stride-2 convolution of one input channel wrong when the program
feeds the image as a 2-D Mat (w, h), as grayscale code does (`ncnn::Mat in(w, h)`; in Python, `ncnn.Mat` of an
(h, w) array), and h is a multiple of 4: garbage values, often NaN, sometimes a crash (Tencent/ncnn#7019).

The .param is the one onnx2ncnn writes for a (1, 1, h, w) model: an Input, then the Convolution. kb's ncnn worker
feeds a classic ncnn model's input without its leading 1, so a case fed as a 2-D Mat takes a (1, h, w) tensor: its
model adds the channel axis (x.unsqueeze(1)), and the cases delete that Unsqueeze from the export (Case.edit), which
leaves the Input-then-Convolution graph of the (1, 1, h, w) model, fed with the (h, w) array."""

from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class GrayConv(nn.Module):
    """A grayscale image (1, h, w) through a 3x3 convolution of one input channel (stride 2, padding 1, as the
    thread's first layer), the channel axis added by unsqueeze(1)."""

    def __init__(self, out_channels=16, stride=2):
        super().__init__()
        self.conv = nn.Conv2d(1, out_channels, 3, stride, 1)

    def forward(self, x):
        return self.conv(x.unsqueeze(1))


class ImageConv(GrayConv):
    """The same convolution on a (1, 1, h, w) image: the model users export; ncnn is then fed a 3-D Mat."""

    def forward(self, x):
        return self.conv(x)


def conv_on_input(model):
    """Delete the Unsqueeze: the Conv reads the graph input, as in the (1, 1, h, w) model's export."""
    nodes = list(model.graph.node)
    squeeze = next(n for n in nodes if n.op_type == "Unsqueeze")
    axes = set(squeeze.input[1:])
    for n in nodes:
        for i, name in enumerate(n.input):
            if name == squeeze.output[0]:
                n.input[i] = squeeze.input[0]
    keep = [n for n in nodes if n is not squeeze and not (n.op_type == "Constant" and set(n.output) & axes)]
    del model.graph.node[:]
    model.graph.node.extend(keep)
    kept = [t for t in model.graph.initializer if t.name not in axes]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)


def gray(h, w=64, seed=1):
    return randn(1, h, w, seed=seed)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    yield Case("gray-16-rows", seeded(GrayConv), (gray(16),), opset=17, dynamo=False, edit=conv_on_input, **IO)
    yield Case("gray-32-rows-8-channels", seeded(GrayConv, 8, seed=2), (gray(32, 48, seed=2),), opset=17,
               dynamo=False, edit=conv_on_input, **IO)
    # Fed as a 2-D Mat too: 14 rows (not a multiple of 4, a control), and a stride-1 convolution.
    yield Case("gray-14-rows", seeded(GrayConv), (gray(14),), opset=17, dynamo=False, edit=conv_on_input,
               trigger=False, **IO)
    yield Case("gray-stride-1", seeded(GrayConv, stride=1), (gray(16),), opset=17, dynamo=False, edit=conv_on_input,
               **IO)
    # Controls: the (1, 1, h, w) models, fed as a 3-D Mat (w, h, 1): the same .param text.
    yield Case("image-16-rows", seeded(ImageConv), (gray(16).unsqueeze(1),), opset=17, dynamo=False, trigger=False,
               **IO)
    yield Case("image-32-rows-8-channels", seeded(ImageConv, 8, seed=2), (gray(32, 48, seed=2).unsqueeze(1),),
               opset=17, dynamo=False, trigger=False, **IO)
    # Workaround: the model keeps its unsqueeze(1) (exported at opset 11, where onnx2ncnn writes it as an
    # ExpandDims of one input): the 2-D Mat becomes a 3-D blob before the convolution.
    yield Case("gray-32-rows-expanddims", seeded(GrayConv, 8, seed=2), (gray(32, 48, seed=2),), opset=11,
               dynamo=False, rewrites="gray-32-rows-8-channels", **IO)
