from kb.checks import Checks

checks = Checks(__file__)


@checks.workaround("mnn", "use-origin-rnn-impl")
def lstm_origin_rnn_session(s):
    """--useOriginRNNImpl keeps the LSTM op: the Session API runs it."""
    return s.mnn.run_session(s.mnn.convert("lstm", "--useOriginRNNImpl", tag="origin"), "lstm")


@checks.workaround("mnn", "use-origin-rnn-impl")
def gru_origin_rnn_session(s):
    return s.mnn.run_session(s.mnn.convert("gru", "--useOriginRNNImpl", tag="origin"), "gru")
