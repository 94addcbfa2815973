from kb.checks import Checks

checks = Checks(__file__)
BUG = ["compute-shape-while", "not-resized"]


@checks.workaround("mnn", "use-origin-rnn-impl")
def lstm_origin_rnn_session(s):
    """--useOriginRNNImpl keeps the LSTM op: the Session API runs it."""
    return s.mnn.run_session(s.mnn.convert("lstm", "--useOriginRNNImpl", tag="origin"), "lstm")


@checks.workaround("mnn", "use-origin-rnn-impl")
def gru_origin_rnn_session(s):
    return s.mnn.run_session(s.mnn.convert("gru", "--useOriginRNNImpl", tag="origin"), "gru")


@checks.variants("mnn", BUG, ["lstm-relu", "gru-silu", "lstm-two-layers", "lstm-bidirectional", "lstm-h0-c0",
                              "gru-h0", "rnn-tanh", "lstm-opset17", "gru-onnxsim", "gru-dynamo",
                              "conv1d-near-miss"])
def session(s, case):
    """Default conversion, run with the Session API."""
    return s.mnn.run_session(s.mnn.convert(case), case)
