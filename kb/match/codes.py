"""Exit codes of `kb scan`, `kb explain` and `kb locate`: one per kind of outcome, so scripts can tell them apart.

Bad input is reported as a KBError carrying one of these codes: one line on stderr, never a traceback.
kb.cli.main adds its own for every command: 70 an internal error, 130 interrupted.
"""

# scan: with --engine, whether a listed problem affects a named release (kb/match/scan.py says how);
# without, whether a match is anything but a regression guard (fixed where measured)
NOTHING_FOUND = 0  # scan: nothing affects them / no match or only regression guards; explain: no signature; locate: no divergence
FOUND = 1  # scan: something affects them / a match that is not a guard; explain: a known problem was found;
# locate: a culprit node was found
# 2 is taken: KBError's default (a broken corpus entry) and click's usage errors.
MISSING = 3  # the file does not exist or cannot be read
IS_DIRECTORY = 4  # a directory was given where a file is expected
CORRUPT_MODEL = 5  # an ONNX file that is truncated or corrupt
NOT_A_MODEL = 6  # the file is not a model at all (text, image, archive of something else...)
EXTERNAL_DATA_MISSING = 7  # an ONNX model whose external data file is missing or too short
CANNOT_SCAN = 8  # a model format that cannot be turned into ONNX here (TorchScript, checkpoint), or its export failed
MODEL_TOO_LARGE = 9  # beyond protobuf's 2 GiB limit for one message
EMPTY_LOG = 10  # the log is empty or holds only blank lines; or no log was given (stdin is a terminal)
BINARY_LOG = 11  # the "log" is binary data
LOG_TOO_LARGE = 12  # the log is beyond the size kb explain reads
BAD_ENGINE = 13  # an --engine value that is not ENGINE or ENGINE==VERSION of a known engine
ENGINE_MISSING = 14  # kb locate: the engine asked for is not installed here
NO_REFERENCE = 15  # kb locate: onnxruntime cannot run the model, so there is nothing to compare with
BAD_INPUTS = 16  # kb locate: the --inputs file is not an .npz holding every model input
