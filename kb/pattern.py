"""Trigger patterns: small graphs of ONNX op types, declared as data and matched in linear time.

The same definition serves the reproducers' precondition checks and `kb scan` on users' models.
"""

from __future__ import annotations

import functools
import math
import re
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

if TYPE_CHECKING:
    import onnx

_OPS = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "in": lambda a, b: a in b,
    "not_in": lambda a, b: a not in b,
    "match": lambda a, b: isinstance(a, str) and re.search(b, a) is not None,
}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Pred(Strict):
    """A test on one attribute value; a missing attribute takes `default`."""

    eq: Any = None
    ne: Any = None
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    in_: list | None = Field(None, alias="in")
    not_in: list | None = None
    length: int | None = None  # a list attribute's length, e.g. kernel_shape of a 1-D or a 2-D Conv
    match: str | None = None  # a regular expression found in a string attribute, e.g. an Einsum's equation
    # True: a list whose two halves differ, as ONNX writes pads (every axis's begin, then every end): a Conv padded
    # more at one end of an axis than at the other. False: halves equal.
    asymmetric: bool | None = None
    default: Any = None

    @field_validator("match")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as e:
                raise ValueError(f"match: not a regular expression ({e}): {v!r}") from None
        return v

    def blind_to_lists(self) -> bool:
        """The test gives one answer for every list, whatever its values: it compares with no list (eq, ne, in,
        not_in against scalars or strings only) and asks no length or order."""
        scalars = [self.eq, self.ne, *(self.in_ or []), *(self.not_in or [])]
        return (self.length is None and self.asymmetric is None and all(x is None for x in (self.gt, self.ge, self.lt, self.le))
                and not any(isinstance(x, (list, tuple)) for x in scalars))

    def test(self, value: Any) -> bool:
        if value is None:
            value = self.default
        if self.length is not None and (not isinstance(value, (list, tuple)) or len(value) != self.length):
            return False
        if self.asymmetric is not None:
            if not isinstance(value, (list, tuple)) or len(value) % 2:
                return False
            half = len(value) // 2
            if (list(value[:half]) != list(value[half:])) != self.asymmetric:
                return False
        for name, fn in _OPS.items():
            want = getattr(self, "in_" if name == "in" else name)
            if want is None:
                continue
            if value is None:
                return False
            try:
                if not fn(value, want):
                    return False
            except TypeError:
                return False
        return True


class NodeSpec(Strict):
    op: str | list[str] = "*"  # an op type, or alternatives: [GRU, LSTM, RNN]
    not_op: list[str] = []  # op types this node must not be (e.g. a base that is never negative)
    custom: bool | None = None  # True: an op that ONNX itself does not define
    outputs: Pred | None = None  # how many outputs the node writes (omitted optional ones do not count)
    # How many inputs the node lists, as a converter's input_size() counts them: an optional input left off
    # the end does not count, one skipped with the empty name "" does (Clip(x, min) vs Clip(x, min, "")).
    inputs: Pred | None = None
    # Attribute tests. An attribute that became an input in a later opset (ReduceMean's `axes` in 18)
    # is read from that input when it is a constant: see `attr_inputs`.
    attrs: dict[str, Pred] = {}
    attr_inputs: dict[str, int] = {}  # attribute -> the input slot that carries it in newer opsets
    graph_inputs: list[int] = []  # these input slots are fed directly by a model input
    graph_output: bool | None = None  # True: the node writes one of its graph's outputs (a fusion may lose the name)
    const_inputs: list[int] = []  # these input slots are initializers or Constant outputs
    computed_inputs: list[int] = []  # these input slots are computed by a node: neither constants nor model inputs
    const_operand: bool = False  # some input is a constant, in either slot (commutative Mul/Add)
    # Dimensions of constant inputs: slot -> dimension -> test, e.g. {1: {1: {gt: 1}}} for a
    # ConvTranspose whose weight has more than one output channel per group (not depthwise).
    const_dims: dict[int, dict[int, Pred]] = {}
    const_rank: dict[int, Pred] = {}  # rank of constant inputs, e.g. {0: {eq: 0}}: a scalar in the first slot
    # Elements of constant inputs, flattened: slot -> index -> test, e.g. {1: {0: {not_in: [0, 1]}}} for a
    # Reshape whose target's first entry is neither kept (0) nor a batch of 1. Negative indexes count from the end.
    const_values: dict[int, dict[int, Pred]] = {}
    # The largest magnitude in a constant input: slot -> test, e.g. {1: {gt: 65504}} for a weight past fp16's range.
    const_abs_max: dict[int, Pred] = {}
    # True: its output depends on a model input's values, not only on constants and shapes, so a converter
    # given the input shape cannot fold it away (the Equal/Where torch writes for a reshape's shape can).
    data_dependent: bool | None = None
    # Element types (onnx.TensorProto codes: 1 float, 7 int64, 9 bool) of input slots, where the graph states
    # them: a model input's declared type, a constant's, a Cast's `to`, a comparison's or logical op's bool,
    # followed through ops that keep the type (GraphIndex.elem_type). Unknown is None, so a test sees its
    # `default`: {0: {ne: 1, default: 0}} is "not known to be float already" (a Cast that really converts).
    input_types: dict[int, Pred] = {}
    # Ranks of input slots, where the graph states them: a constant's dims, a model input's declared shape, a
    # value_info entry (dynamo writes one for every tensor). Unknown is None, so a test sees its `default`:
    # {0: {ge: 3, default: 3}} is "not known to be below rank 3".
    input_rank: dict[int, Pred] = {}

    def ops(self) -> set[str] | None:
        if self.op == "*":
            return None
        return {self.op} if isinstance(self.op, str) else set(self.op)


class Pattern(Strict):
    """Nodes by name, and edges [producer, consumer]: an output of one feeds an input of the other."""

    name: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    summary: str
    nodes: dict[str, NodeSpec] = Field(min_length=1)
    edges: list[tuple[str, str]] = []
    # Ops that may sit on an edge without breaking it: shape-preserving elementwise ops users put
    # between the two (Relu, SiLU's Sigmoid and Mul, a scalar Mul). Each has one computed input.
    through: list[str] = []
    checks: list[str] = []  # the checks that measure this pattern (names or globs, e.g. variant-*): a
    # match's status cites only these
    # Pairs of [node, input slot, dimension] whose constants must have that dimension equal, for a
    # dependency between two nodes' constants: GroupNorm's export, InstanceNormalization over G groups then
    # the affine weight over C channels, is [[norm, 1, 0], [scale, 1, 0]] for G == C.
    same_dims: list[tuple[tuple[str, int, int], tuple[str, int, int]]] = []

    def measured_by(self, names) -> list[str]:
        """The check names among `names` that `checks` selects."""
        import fnmatch

        return [n for n in names if any(fnmatch.fnmatchcase(n, g) for g in self.checks)]

    @model_validator(mode="after")
    def _connected(self) -> Pattern:
        names = set(self.nodes)
        for a, b in self.edges:
            for n in (a, b):
                if n not in names:
                    raise ValueError(f"pattern {self.name!r}: edge names unknown node {n!r}")
        if len(self._order()) != len(names):
            raise ValueError(f"pattern {self.name!r}: nodes are not connected by edges")
        for pair in self.same_dims:
            for n, _, _ in pair:
                if n not in names:
                    raise ValueError(f"pattern {self.name!r}: same_dims names unknown node {n!r}")
        return self

    def _order(self, start: str | None = None) -> list[str]:
        """Pattern nodes in breadth-first order from `start`, so each one after the first touches a placed one."""
        adj: dict[str, set[str]] = defaultdict(set)
        for a, b in self.edges:
            adj[a].add(b)
            adj[b].add(a)
        first = start or next(iter(self.nodes))
        seen, queue = [first], deque([first])
        while queue:
            for n in sorted(adj[queue.popleft()]):
                if n not in seen:
                    seen.append(n)
                    queue.append(n)
        return seen


@dataclass(frozen=True)
class Match:
    pattern: str
    nodes: dict[str, str]  # pattern node -> graph node name
    graph: str  # the (sub)graph's name


class Scope:
    """Names visible in a graph: its own, then its enclosing graphs' (If/Loop bodies read outer
    initializers and model inputs by name), looked up without copying the outer sets."""

    __slots__ = ("own", "outer")

    def __init__(self, own: set[str], outer: Scope | None = None):
        self.own, self.outer = own, outer

    def __contains__(self, name: str) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.own:
                return True
            scope = scope.outer
        return False


class GraphIndex:
    """Producer and consumer maps of one ONNX graph, built in one pass; also finds its subgraphs."""

    def __init__(self, graph: onnx.GraphProto, outer: GraphIndex | None = None):
        import onnx

        self.graph = graph
        self.nodes = list(graph.node)
        self.names = [n.name or f"{n.op_type}#{i}" for i, n in enumerate(self.nodes)]
        self.initializers = {t.name: t for t in graph.initializer}
        own_consts = set(self.initializers) | {t.values.name for t in graph.sparse_initializer}
        # An input that has an initializer is a default value (exporters with keep_initializers_as_inputs
        # list every weight as an input): it is a constant, not something the user feeds.
        self.inputs = Scope({i.name for i in graph.input} - own_consts, outer.inputs if outer else None)
        self.consts = Scope(own_consts, outer.consts if outer else None)
        self.outputs = {o.name for o in graph.output}
        self.producer: dict[str, int] = {}
        self.consumers: dict[str, list[int]] = defaultdict(list)
        self.by_op: dict[str, list[int]] = defaultdict(list)
        self.subgraphs: list[onnx.GraphProto] = []
        for i, n in enumerate(self.nodes):
            self.by_op[n.op_type].append(i)
            if n.op_type == "Constant":
                own_consts.update(n.output)
            for t in n.output:
                self.producer[t] = i
            for t in set(n.input):
                if t:
                    self.consumers[t].append(i)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    self.subgraphs.append(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    self.subgraphs.extend(a.graphs)
        self._attrs: dict[int, dict[str, Any]] = {}
        self._dynamic: set[int] | None = None
        self._stated: dict | None = None  # tensor name -> its stated TypeProto.Tensor (rank())

    SHAPE_ONLY = frozenset({"Shape", "Size"})  # their outputs are fixed once the input shape is

    def dynamic(self) -> set[int]:
        """The nodes whose outputs depend on a model input's values (or on an outer graph's)."""
        if self._dynamic is None:
            seen: set[int] = set()
            frontier = [i for i, n in enumerate(self.nodes)
                        if any(t and (t in self.inputs or (t not in self.producer and t not in self.consts))
                               for t in n.input)]
            while frontier:
                i = frontier.pop()
                if i in seen or self.nodes[i].op_type in self.SHAPE_ONLY:
                    continue
                seen.add(i)
                frontier += [c for t in self.nodes[i].output for c in self.consumers.get(t, ())]
            self._dynamic = seen
        return self._dynamic

    def attrs(self, i: int) -> dict[str, Any]:
        if i not in self._attrs:
            import onnx

            self._attrs[i] = {
                a.name: onnx.helper.get_attribute_value(a)
                for a in self.nodes[i].attribute
                if a.type not in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
            }
        return self._attrs[i]

    def fits(self, i: int, spec: NodeSpec) -> bool:
        node = self.nodes[i]
        ops = spec.ops()
        if ops is not None and node.op_type not in ops:
            return False
        if node.op_type in spec.not_op:
            return False
        if spec.custom is not None and spec.custom != _is_custom(node.op_type, node.domain):
            return False
        if spec.outputs is not None and not spec.outputs.test(sum(1 for t in node.output if t)):
            return False
        if spec.inputs is not None and not spec.inputs.test(len(node.input)):
            return False
        if spec.graph_output is not None and spec.graph_output != any(t in self.outputs for t in node.output):
            return False
        for slot in spec.graph_inputs:
            if slot >= len(node.input) or node.input[slot] not in self.inputs:
                return False
        for slot in spec.const_inputs:
            if slot >= len(node.input) or node.input[slot] not in self.consts:
                return False
        for slot in spec.computed_inputs:
            if slot >= len(node.input) or node.input[slot] not in self.producer or node.input[slot] in self.consts:
                return False
        if spec.const_operand and not any(t in self.consts for t in node.input if t):
            return False
        for slot, dims in spec.const_dims.items():
            shape = self.const_shape(node.input[slot]) if slot < len(node.input) else None
            if shape is None or any(d >= len(shape) or not p.test(shape[d]) for d, p in dims.items()):
                return False
        if spec.data_dependent is not None and spec.data_dependent != (i in self.dynamic()):
            return False
        for slot, pred in spec.input_types.items():
            if not pred.test(self.elem_type(node.input[slot]) if slot < len(node.input) else None):
                return False
        for slot, pred in spec.input_rank.items():
            if not pred.test(self.rank(node.input[slot]) if slot < len(node.input) and node.input[slot] else None):
                return False
        for slot, pred in spec.const_rank.items():
            shape = self.const_shape(node.input[slot]) if slot < len(node.input) else None
            if shape is None or not pred.test(len(shape)):
                return False
        for slot, pred in spec.const_abs_max.items():
            if not pred.test(self.abs_max(node.input[slot]) if slot < len(node.input) else None):
                return False
        for slot, tests in spec.const_values.items():
            value = self.const_value(node.input[slot]) if slot < len(node.input) else None
            flat = _flatten(value) if value is not None else []
            if not flat or any(not (-len(flat) <= k < len(flat)) or not pred.test(flat[k]) for k, pred in tests.items()):
                return False
        if spec.attrs:
            attrs = self.attrs(i)
            for key, pred in spec.attrs.items():
                value = attrs.get(key)
                if value is None and key in spec.attr_inputs and spec.attr_inputs[key] < len(node.input):
                    value = self.attr_input(node.input[spec.attr_inputs[key]], pred)
                if isinstance(value, bytes):
                    value = value.decode()
                if not pred.test(value):
                    return False
        return True

    KEEP_TYPE = frozenset({"Identity", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Transpose", "Expand", "Slice",
                           "Gather", "Tile", "Concat", "Split", "Neg", "Abs", "Relu", "Add", "Sub", "Mul", "Div"})
    BOOL_OUT = frozenset({"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor", "Not",
                          "IsNaN", "IsInf"})

    def elem_type(self, name: str, depth: int = 16) -> int | None:
        """The element type of a tensor as the graph states it (see NodeSpec.input_types), or None."""
        if name in self.initializers:
            return self.initializers[name].data_type
        i = self.producer.get(name)
        if i is None:
            declared = next((v.type.tensor_type.elem_type for v in self.graph.input if v.name == name), 0)
            return declared or None
        node = self.nodes[i]
        if node.op_type == "Constant":
            t = self._const(name)
            return t.data_type if t is not None else None
        if node.op_type == "Cast":
            return self.attrs(i).get("to")
        if node.op_type in self.BOOL_OUT:
            return 9
        if node.op_type in ("Shape", "Size"):
            return 7
        if node.op_type in self.KEEP_TYPE and node.input and depth > 0:
            return self.elem_type(node.input[0], depth - 1)
        return None

    def rank(self, name: str) -> int | None:
        """The rank of a tensor as the graph states it (see NodeSpec.input_rank), or None."""
        shape = self.const_shape(name)
        if shape is not None:
            return len(shape)
        if self._stated is None:
            self._stated = {v.name: v.type.tensor_type for v in (*self.graph.input, *self.graph.value_info,
                                                                   *self.graph.output)}
        t = self._stated.get(name)
        return len(t.shape.dim) if t is not None and t.HasField("shape") else None

    def _const(self, name: str):
        """The TensorProto of a constant (an initializer, or a Constant node's value), or None."""
        if name in self.initializers:
            return self.initializers[name]
        i = self.producer.get(name)
        if i is not None and self.nodes[i].op_type == "Constant":
            return next((a.t for a in self.nodes[i].attribute if a.name == "value"), None)
        return None

    def const_shape(self, name: str) -> list[int] | None:
        t = self._const(name)
        return list(t.dims) if t is not None else None

    def const_dim(self, i: int, slot: int, dim: int) -> int | None:
        """Dimension `dim` of node i's constant input `slot`, or None (no such input, not a constant)."""
        node = self.nodes[i]
        shape = self.const_shape(node.input[slot]) if slot < len(node.input) else None
        return shape[dim] if shape is not None and -len(shape) <= dim < len(shape) else None

    def const_value(self, name: str):
        """A constant's value as a (nested) list, e.g. ReduceMean's axes input."""
        import onnx.numpy_helper

        t = self._const(name)
        if t is None or t.data_location == onnx.TensorProto.EXTERNAL:  # weights on disk are never read
            return None
        return onnx.numpy_helper.to_array(t).tolist()

    LARGE = 1024  # values: a constant this large is a weight, never an attribute that became an input

    def attr_input(self, name: str, pred: Pred):
        """const_value, for a test on an attribute that an input carries; a large constant (a weight, as KB045's
        pattern asks where one is stored) is not converted where the test's answer is the same for any list:
        a list stands in for it (tolist() on every weight of a 45 MB model took 5 s of CPU in kb locate)."""
        import onnx

        t = self._const(name)
        if (t is not None and t.data_location != onnx.TensorProto.EXTERNAL and len(t.dims)
                and math.prod(t.dims) > self.LARGE and pred.blind_to_lists()):
            return [None]  # compares as the real list does with every scalar or string
        return self.const_value(name)

    def abs_max(self, name: str) -> float | None:
        """The largest magnitude in a constant (a weight), or None if it is no constant, empty or on disk."""
        import numpy as np
        import onnx.numpy_helper

        t = self._const(name)
        if t is None or t.data_location == onnx.TensorProto.EXTERNAL:
            return None
        arr = onnx.numpy_helper.to_array(t)
        return float(np.abs(arr).max()) if arr.size and arr.dtype.kind in "fiu" else None

    def feeds(self, a: int, b: int, through: frozenset[str] = frozenset()) -> bool:
        return b in self.downstream(a, through)

    def downstream(self, a: int, through: frozenset[str] = frozenset(), depth: int = 8) -> set[int]:
        """The nodes an output of `a` feeds, directly or through a chain of `through` ops."""
        out: set[int] = set()
        frontier = [a]
        for _ in range(depth):
            nxt = []
            for n in frontier:
                for c in {c for t in self.nodes[n].output for c in self.consumers.get(t, ())}:
                    if c not in out:
                        out.add(c)
                        if self.nodes[c].op_type in through:
                            nxt.append(c)
            if not nxt:
                break
            frontier = nxt
        return out

    def upstream(self, b: int, through: frozenset[str] = frozenset(), depth: int = 8) -> set[int]:
        """The nodes whose outputs feed `b`, directly or through a chain of `through` ops."""
        out: set[int] = set()
        frontier = [b]
        for _ in range(depth):
            nxt = []
            for n in frontier:
                for p in {self.producer[t] for t in self.nodes[n].input if t in self.producer}:
                    if p not in out:
                        out.add(p)
                        if self.nodes[p].op_type in through:
                            nxt.append(p)
            if not nxt:
                break
            frontier = nxt
        return out

    def seeds(self, spec: NodeSpec) -> list[int] | range:
        """The nodes whose op type `spec` allows: where a match can start."""
        ops = spec.ops()
        if ops is None:
            return range(len(self.nodes))
        return [i for op in sorted(ops) for i in self.by_op.get(op, ())]


@functools.lru_cache(maxsize=None)  # one schema lookup per op type, not per node
def _is_custom(op_type: str, domain: str) -> bool:
    import onnx.defs

    if domain in ("", "ai.onnx", "ai.onnx.ml"):
        return not onnx.defs.has(op_type, domain)
    return True


def match_graph(pattern: Pattern, index: GraphIndex) -> list[Match]:
    # Start from the pattern node with the fewest candidates in this graph: a rare op, not a wildcard.
    seeds = {name: index.seeds(spec) for name, spec in pattern.nodes.items()}
    start = min(pattern.nodes, key=lambda name: len(seeds[name]))
    order = pattern._order(start)
    through = frozenset(pattern.through)
    found: dict[frozenset[int], Match] = {}

    def extend(k: int, placed: dict[str, int]) -> None:
        if k == len(order):
            if not all(index.const_dim(placed[a], sa, da) == index.const_dim(placed[b], sb, db) is not None
                       for (a, sa, da), (b, sb, db) in pattern.same_dims):
                return
            key = frozenset(placed.values())
            if key not in found:
                found[key] = Match(
                    pattern.name,
                    {p: index.names[placed[p]] for p in pattern.nodes},
                    index.graph.name,
                )
            return
        name = order[k]
        spec = pattern.nodes[name]
        for cand in _candidates(pattern, index, name, placed, through):
            if cand in placed.values() or not index.fits(cand, spec):
                continue
            placed[name] = cand
            if all(
                index.feeds(placed[a], placed[b], through) for a, b in pattern.edges if a in placed and b in placed
            ):
                extend(k + 1, placed)
            del placed[name]

    for seed in seeds[start]:
        if index.fits(seed, pattern.nodes[start]):
            extend(1, {start: seed})
    return list(found.values())


def _candidates(pattern: Pattern, index: GraphIndex, name: str, placed: dict[str, int],
                through: frozenset[str]) -> list[int]:
    """Graph nodes adjacent to an already placed neighbour of `name` (through `through` ops), in graph order."""
    for a, b in pattern.edges:
        if a == name and b in placed:
            return sorted(index.upstream(placed[b], through))
        if b == name and a in placed:
            return sorted(index.downstream(placed[a], through))
    return []


def indexes(model: onnx.ModelProto) -> Iterator[GraphIndex]:
    """An index of the main graph and of every graph nested in its nodes (Loop, If, Scan bodies)."""
    stack = [GraphIndex(model.graph)]
    while stack:
        index = stack.pop()
        yield index
        stack.extend(GraphIndex(g, index) for g in reversed(index.subgraphs))


def find(patterns: list[Pattern], model: onnx.ModelProto) -> list[Match]:
    """Every match of any pattern anywhere in the model."""
    matches: list[Match] = []
    for index in indexes(model):
        for p in patterns:
            matches.extend(match_graph(p, index))
    return matches


def _flatten(value) -> list:
    """A constant's value (a nested list, or a scalar) as one flat list."""
    if not isinstance(value, list):
        return [value]
    return [x for v in value for x in _flatten(v)]
