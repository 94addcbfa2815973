"""Call a converted model as user code does (run by runpy in a child). Globals: MODEL, FEED, OUT, OUTPUTS, MODE."""

import MNN.expr as F
import MNN.nn as nn
import numpy as np

with np.load(FEED) as z:  # noqa: F821 -- set by the check
    x = next(iter(z.values())).astype(np.float32)
net = nn.load_module_from_file(MODEL, ["in0"], OUTPUTS)  # noqa: F821
var = F.const(x.flatten().tolist(), list(x.shape), F.NCHW)
if MODE == "forward-var":  # noqa: F821
    ys = net.forward(var)
    a, b, c = ys  # the user's unpacking of three outputs
    ys = [a, b, c]
elif MODE == "onforward-var":  # noqa: F821
    ys = net.onForward(var)
elif MODE == "forward-list":  # noqa: F821
    ys = net.forward([var])
print(MODE, "returned", len(ys), "outputs")  # noqa: F821
np.savez(OUT, **{n: np.array(F.convert(y, F.NCHW).read()) for n, y in zip(OUTPUTS, ys)})  # noqa: F821
