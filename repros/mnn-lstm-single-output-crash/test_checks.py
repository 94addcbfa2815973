from convkb.checks import Checks

checks = Checks(__file__)
BUG = ["convert-crash"]


@checks.bug("mnn", BUG)
def lstm_dynamo(s):
    """Linear -> LSTM -> Linear exported with dynamo=True (LSTM node with only Y): default mnnconvert, Module API."""
    return s.mnn.run(s.mnn.convert("lstm"))


@checks.control("mnn")
def gru_dynamo(s):
    """Control: the same block with a GRU, exported with dynamo=True (GRU node with only Y as well)."""
    return s.mnn.run(s.mnn.convert("gru"))


@checks.workaround("mnn", "origin-rnn-impl")
def lstm_origin_rnn_impl(s):
    """The same ONNX file converted with --useOriginRNNImpl (MNN's own LSTM op, no While rewrite)."""
    return s.mnn.run(s.mnn.convert("lstm", "--useOriginRNNImpl", tag="origin"), "lstm")


@checks.workaround("mnn", "torchscript-export")
def lstm_torchscript(s):
    """The same model exported with dynamo=False: the LSTM node keeps Y, Y_h and Y_c."""
    return s.mnn.run(s.mnn.convert("lstm-torchscript"))


@checks.workaround("mnn", "return-states")
def lstm_return_states(s):
    """The same model returning (y, h, c) with dynamo=True: the node keeps its three outputs; y is judged."""
    return s.mnn.run(s.mnn.convert("lstm-return-states"))


@checks.variants("mnn", BUG)
def convert_and_run(s, case):
    """Default mnnconvert, then MNN's Module API; compared with torch."""
    return s.mnn.run(s.mnn.convert(case))

