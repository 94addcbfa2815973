"""Tools that are on neither PyPI nor Debian, built from source on this machine.

`kb.tools.build` compiles ncnn's legacy ONNX converter, onnx2ncnn, from a user's ncnn checkout (this
project ships no third-party source) into `<root>/.kb/tools/`.
"""
