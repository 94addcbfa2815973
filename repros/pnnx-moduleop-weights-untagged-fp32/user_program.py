"""KB234's user program, run in a child (test_checks.py): ncnn with the user's custom layer for the module pnnx kept
whole (ScaledLinear, y = x W^T * 2), which reads its 100 weights from the .bin in one of two ways:

- "tagged": ModelBin::load(100, 0), as ncnn's own layers read their weights: a 4-byte tag first (0 for fp32,
  0x01306B47 for fp16), then the data it announces;
- "raw": ModelBin::load(100, 1): 100 bare fp32 values, no tag.

`post_pass` rewrites the .bin: the layer's bare fp32 weights (the first blob of the file here) as a tagged fp16 blob."""

import struct
import sys
from pathlib import Path

FP16_TAG = 0x01306B47
COUNT = 100  # ScaledLinear's weights (10 x 10)


def post_pass(bin: str, out: str, offset: int = 0, count: int = COUNT) -> None:
    """The .bin with `count` bare fp32 values at `offset` replaced by the fp16 tag and their fp16 values (count is even
    here: no padding needed). The custom layer then reads them with type 0."""
    import numpy as np

    data = Path(bin).read_bytes()
    weights = np.frombuffer(data, np.float32, count, offset)
    blob = struct.pack("<I", FP16_TAG) + weights.astype(np.float16).tobytes()
    Path(out).write_bytes(data[:offset] + blob + data[offset + 4 * count:])
    print(f"post-pass: {Path(bin).name} {len(data)} bytes -> {Path(out).name} {len(data) - 4 * count + len(blob)} bytes",
          flush=True)


def feed(param: str, bin: str, inputs: str, out: str, how: str) -> None:
    """Load the model with the custom layer registered, reading its weights `how` ("tagged" or "raw"), run it."""
    import ncnn
    import numpy as np

    from kb.workers.ncnn import infer

    kind = {"tagged": 0, "raw": 1}[how]

    class ScaledLinear(ncnn.Layer):
        def __init__(self):
            ncnn.Layer.__init__(self)
            self.one_blob_only = True

        def load_model(self, mb):
            w = mb.load(COUNT, kind)
            if w.empty():
                return -100
            self.weight = np.array(w).reshape(10, 10).copy()
            return 0

        def forward(self, bottom, top, opt):
            x = np.array(bottom).reshape(-1, 10)
            y = np.ascontiguousarray(x @ self.weight.T * 2, dtype=np.float32)  # held: ncnn.Mat(y) does not own it
            mat = ncnn.Mat(y)
            top.clone_from(mat, opt.blob_allocator)  # a copy ncnn owns, made while y and mat are alive
            return 0

    layers = []

    def create():
        layers.append(ScaledLinear())
        return layers[-1]

    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    net.register_custom_layer("kb_repro.ScaledLinear", create, lambda layer: None)
    if net.load_param(param) != 0:
        sys.exit("ncnn: load_param failed")
    print(f"ncnn: {Path(bin).name}: {Path(bin).stat().st_size} bytes; ScaledLinear reads its weights with "
          f"ModelBin::load({COUNT}, {kind})", flush=True)
    if net.load_model(bin) != 0:
        sys.exit("ncnn: load_model failed")
    infer(net, inputs, out, ["in0"], {"out0": "out0"}, [None], [None])
