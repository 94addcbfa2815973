import sys
from pathlib import Path

from kb import child
from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)
BUG = ["compute-shape-while", "not-resized"]

# MNN's Session API, as C++ and older Python code use it: Interpreter -> createSession -> resize -> runSession.
SESSION = r"""
import sys, json
import numpy as np
import MNN
model, feed, out, names = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
with np.load(feed) as z:
    inputs = {k: z[k].astype(np.float32) for k in z.files}
net = MNN.Interpreter(model)
session = net.createSession({"numThread": 1})
for name, a in inputs.items():
    t = net.getSessionInput(session, name)
    net.resizeTensor(t, a.shape)
net.resizeSession(session)
for name, a in inputs.items():
    t = net.getSessionInput(session, name)
    t.copyFrom(MNN.Tensor(a.shape, MNN.Halide_Type_Float, a, MNN.Tensor_DimensionType_Caffe))
code = net.runSession(session)
print("runSession returned", code)
if code != 0:
    sys.exit(f"runSession returned error code {code}")
res = {}
for name in names:
    o = net.getSessionOutput(session, name)
    host = MNN.Tensor(o.getShape(), MNN.Halide_Type_Float, np.zeros(o.getShape(), np.float32),
                      MNN.Tensor_DimensionType_Caffe)
    o.copyToHostTensor(host)
    res[name] = np.array(host.getData(), dtype=np.float32).reshape(o.getShape())
np.savez(out, **res)
"""


def session_run(s, model: Path, case: str) -> Outputs:
    """Run a .mnn file with the Session API in a child; outputs named as in the case."""
    import json

    out = s.path(f"{model.stem}.session-out.npz")
    feed = s.artifacts.inputs(case)
    outputs = s.artifacts.case(case)["outputs"]
    s.step(child.run_command(f"MNN session {model.name}",
                             [sys.executable, "-c", SESSION, str(model), str(feed), str(out), json.dumps(outputs)],
                             shown=f"MNN.Interpreter({model.name!r}).createSession() ... runSession()"),
           produces=[out])
    return Outputs.load(case, out, f"MNN {s.mnn.version()} session")


@checks.bug("mnn", BUG)
def lstm_session(s):
    """Default conversion, Session API."""
    return session_run(s, s.mnn.convert("lstm"), "lstm")


@checks.bug("mnn", BUG)
def gru_session(s):
    return session_run(s, s.mnn.convert("gru"), "gru")


@checks.bug("mnn", BUG)
def conv_control_session(s):
    """Control: no recurrent layer, the Session API runs it."""
    return session_run(s, s.mnn.convert("conv-control"), "conv-control")


@checks.workaround("mnn", "use-origin-rnn-impl")
def lstm_origin_rnn_session(s):
    """--useOriginRNNImpl keeps the LSTM op: the Session API runs it."""
    return session_run(s, s.mnn.convert("lstm", "--useOriginRNNImpl", tag="origin"), "lstm")


@checks.workaround("mnn", "use-origin-rnn-impl")
def gru_origin_rnn_session(s):
    return session_run(s, s.mnn.convert("gru", "--useOriginRNNImpl", tag="origin"), "gru")


@checks.workaround("mnn", "module-api")
def lstm_module_api(s):
    """The same default conversion, run with MNN.nn.load_module_from_file."""
    return s.mnn.run(s.mnn.convert("lstm"))


@checks.workaround("mnn", "module-api")
def gru_module_api(s):
    return s.mnn.run(s.mnn.convert("gru"))


@checks.variants("mnn", BUG, ["lstm-relu", "gru-silu", "lstm-two-layers", "lstm-bidirectional", "lstm-h0-c0",
                              "gru-h0", "rnn-tanh", "lstm-opset17", "gru-onnxsim", "gru-dynamo",
                              "conv1d-near-miss"])
def session(s, case):
    """Default conversion, run with the Session API."""
    return session_run(s, s.mnn.convert(case), case)
