"""Feeding MNN from numpy: an integer input (an int64 index or streaming state) keeps its integer type.

Before, the worker fed every input as float32, and MNN failed on a Gather index with a shape error, so no
entry could measure a model with an int64 input. Every run is a child process (kb.child)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from kb.child import run_function
from kb.engines.mnn import convert_step

pytest.importorskip("MNN")


@pytest.fixture(scope="module")
def gather(tmp_path_factory):
    """y = data[idx] + 1, with data float (4, 3) and idx int64 (2,): wrong or failing if idx is read as float."""
    d = tmp_path_factory.mktemp("mnn-int")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["data", "idx"], ["g"], axis=0), helper.make_node("Add", ["g", "one"], ["y"])],
        "gather", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [4, 3]),
                   helper.make_tensor_value_info("idx", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), d / "gather.onnx")
    step = convert_step(d / "gather.onnx", d / "gather.mnn")  # kb's own mnnconvert step: _tools, in a child
    assert step.ok, step.output
    data, idx = np.arange(12, dtype=np.float32).reshape(4, 3), np.array([3, 1], dtype=np.int64)
    np.savez(d / "feed.npz", data=data, idx=idx)
    return d, data[idx] + 1


@pytest.mark.parametrize("api", ["run", "session"])
def test_an_int64_input_is_fed_as_an_integer(gather, api):
    d, want = gather
    step = run_function(f"mnn {api}", f"kb.workers.mnn:{api}", model=str(d / "gather.mnn"),
                        feed=str(d / "feed.npz"), out=str(d / f"{api}.npz"), outputs=["y"])
    assert step.ok, step.output
    with np.load(d / f"{api}.npz") as z:
        np.testing.assert_array_equal(z["y"], want)
