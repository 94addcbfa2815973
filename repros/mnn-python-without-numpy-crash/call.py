"""Run a converted model as user code does, with numpy hidden (MODE no-numpy-*) or present (run by runpy in a
child). Globals: MODEL, INPUTS ({name: (flat list, shape)}), OUT, MODE. Each step prints when it is done."""

import sys

if MODE.startswith("no-numpy"):  # noqa: F821 -- set by the check
    sys.modules["numpy"] = None  # `import numpy` now fails, as where numpy is not installed
import MNN.expr as F  # noqa: E402
import MNN.nn as nn  # noqa: E402

X, SHAPE = INPUTS["in0"]  # noqa: F821
print("imported", flush=True)
net = None
if MODE == "no-numpy-load":  # noqa: F821 -- the model first
    net = nn.load_module_from_file(MODEL, ["in0"], ["out0"])  # noqa: F821
    print("model loaded", flush=True)
if MODE == "no-numpy-mnn-numpy":  # noqa: F821
    import MNN.numpy as mp

    x = mp.array(X).reshape(SHAPE)
else:
    x = F.const(X, SHAPE, F.NCHW)
print("input made", flush=True)
net = net or nn.load_module_from_file(MODEL, ["in0"], ["out0"])  # noqa: F821
y = list(F.convert(net.forward([x])[0], F.NCHW).read_as_tuple())
print(MODE, "ran", flush=True)  # noqa: F821
del sys.modules["numpy"]  # numpy back (it is installed here), to write the outputs
import numpy as np  # noqa: E402

np.savez(OUT, out0=np.array(y, np.float32).reshape(1, -1))  # noqa: F821
