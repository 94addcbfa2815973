"""MNN's own ARM kernels on an emulated arm64 CPU (kb.tools.arm64): what x86 never runs."""

import numpy as np
import pytest


def test_mnn_low_precision_on_an_emulated_armv82_cpu(tmp_path):
    """MNN's precision=low is fp16 arithmetic where the CPU has it: 160000 is inf on cortex-a76, right on
    cortex-a72 and x86, and with precision low_bf16. Skipped where `kb tools build arm64` was not run."""
    import importlib.metadata

    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from kb.child import run_function
    from kb.engines.base import Unavailable
    from kb.engines.mnn import convert_step
    from kb.tools import arm64

    pytest.importorskip("MNN")
    try:
        arm64.runner("cortex-a76", "mnn", importlib.metadata.version("MNN"))
    except Unavailable as e:
        pytest.skip(str(e))
    w = numpy_helper.from_array(np.full((16, 4), 10, np.float32), "w")
    k = numpy_helper.from_array(np.array(1000, np.float32), "k")
    g = helper.make_graph([helper.make_node("MatMul", ["in0", "w"], ["y"]), helper.make_node("Mul", ["y", "k"], ["out0"])],
                          "big", [helper.make_tensor_value_info("in0", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("out0", TensorProto.FLOAT, [1, 4])], [w, k])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "big.onnx")
    assert convert_step(tmp_path / "big.onnx", tmp_path / "big.mnn").ok
    np.savez(tmp_path / "in.npz", in0=np.ones((1, 16), np.float32))
    # low_bf16 (Precision_Low_BF16): the PyPI wheels are built without MNN_SUPPORT_BF16, so MNN runs it in fp32
    for cpu, precision, want in (("cortex-a76", "normal", 160000.0), ("cortex-a72", "low", 160000.0),
                                 ("cortex-a76", "low", np.inf), (None, "low", 160000.0),
                                 ("cortex-a76", "low_bf16", 160000.0)):
        emulated = arm64.runner(cpu, "mnn", importlib.metadata.version("MNN")) if cpu else {}
        step = run_function("MNN run", "kb.workers.mnn:run", timeout=300, **emulated,
                            model=str(tmp_path / "big.mnn"), feed=str(tmp_path / "in.npz"),
                            out=str(tmp_path / "out.npz"), outputs=["out0"], precision=precision)
        assert step.ok, step.output[-500:]
        with np.load(tmp_path / "out.npz") as z:
            assert z["out0"].tolist() == [[want] * 4], (cpu, precision)
