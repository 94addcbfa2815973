"""Tools that are on neither PyPI nor Debian, built from source on this machine.

`kb.tools.build` compiles ncnn's legacy ONNX converter, onnx2ncnn, from the copy of ncnn's
tools/onnx vendored in `ncnn_onnx/` (or from a user's ncnn checkout) into `<root>/.kb/tools/`.
"""
