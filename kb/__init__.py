"""kb: the knowledge base of PyTorch -> ONNX -> MNN / ncnn conversion bugs (a regular package: a second
checkout never merges into this one)."""
