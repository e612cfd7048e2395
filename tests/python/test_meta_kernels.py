"""Meta kernels of torch.ops.tilefoundry.*: shapes come from HIR shape
inference through the C ABI — tf_kernel_output_desc for concrete sizes, the
kernel's shape program (tf_kernel_input_axis / tf_kernel_*_extent: the
signature's rules as data) evaluated over SymInts for symbolic ones — so
torch.compile(fullgraph=True, dynamic=True) captures a model calling the ops
once for every sequence length. The symbolic path is also run here over
plain ints (any torch); the torch.compile parts need torch 2.x (`make
test-torch2`) and are skipped on Debian's torch 1.13."""
import itertools

import pytest
import torch

import tilefoundry as tf
from tilefoundry import meta
from tilefoundry import shape_program as sp

_ids = itertools.count()

SRC = '''from tilefoundry.dsl import *

S = DimVar("S", 1, 4096)
D = 16

@func
def rmsnorm(x: Tensor[(S, D), f32], w: Tensor[(D,), f32]) -> Tensor[(S, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def pad_rows(x: Tensor[(S, D), f32]
             ) -> tuple[Tensor[(S * 2 + 1, D), f32], Tensor[(dim_min(S, 8), D), f32]]:
    return zeros((S * 2 + 1, D), f32), x[:dim_min(S, 8), :]

@func
def mixed(x: Tensor[(S, D), f32], y: Tensor[(S * 2, D), f32]
          ) -> tuple[Tensor[(dim_min(S, 8), D), f32], Tensor[(S % 3 + 1,), i32],
                     Tensor[(S // 2 + 1, D), f64]]:
    small = x[:dim_min(S, 8), :] + y[:dim_min(S, 8), :]
    return small, zeros((S % 3 + 1,), i32), zeros((S // 2 + 1, D), f64)
'''

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


@pytest.fixture(scope="module")
def module():
    return tf.load(SRC)


@pytest.fixture(scope="module")
def ops(module):
    # The Meta kernel reads shapes, not code: the evaluator keeps these tests
    # independent of a C++ compiler.
    n = next(_ids)
    return tuple(tf.register(module.compile(name, backend="evaluator"), "meta_%s_%d" % (name, n))
                 for name in ("rmsnorm", "pad_rows", "mixed"))


def test_meta_shapes_match_the_cpu_kernel(ops):
    norm, pad, mixed = ops
    x, w = torch.randn(5, 16), torch.randn(16)
    real, fake = norm(x, w), norm(x.to("meta"), w.to("meta"))
    assert fake.device.type == "meta"
    assert (fake.shape, fake.dtype) == (real.shape, real.dtype)
    real, fake = pad(x), pad(x.to("meta"))
    assert [t.shape for t in fake] == [t.shape for t in real] == [(11, 16), (5, 16)]
    assert all(t.device.type == "meta" for t in fake)
    y = torch.randn(10, 16)
    real, fake = mixed(x, y), mixed(x.to("meta"), y.to("meta"))
    assert [(t.shape, t.dtype) for t in fake] == [(t.shape, t.dtype) for t in real] == [
        ((5, 16), torch.float32), ((3,), torch.int32), ((3, 16), torch.float64)]


def test_meta_checks_bindings_like_the_kernel(ops):
    norm, _, mixed = ops
    with pytest.raises(RuntimeError, match="axis 0 must be 16, but got 15"):
        norm(torch.empty(5, 16, device="meta"), torch.empty(15, device="meta"))
    with pytest.raises(RuntimeError, match="outside its range"):
        norm(torch.empty(5000, 16, device="meta"), torch.empty(16, device="meta"))
    with pytest.raises(RuntimeError, match=r"axis 0 must be S \* 2 = 10, but got 9"):
        mixed(torch.empty(5, 16, device="meta"), torch.empty(9, 16, device="meta"))


def test_shape_program_is_the_signature_as_data(module):
    prog = module.compile("mixed", backend="evaluator").shape_program()
    (x, y), (small, count, half) = prog.inputs, prog.outputs
    assert x.dtype == y.dtype == "f32"
    assert x.axes[0] == sp.InputAxis(sp.BINDS_DIMVAR, 0, 1, 4096, (0, 0),
                                     (sp.PUSH_INPUT_EXTENT, 0, 0))
    assert x.axes[1] == sp.InputAxis(sp.STATIC, 16, 0, 0, None, (sp.PUSH_CONST, 16))
    assert y.axes[0].rule == sp.EXPR
    assert y.axes[0].program == (sp.PUSH_INPUT_EXTENT, 0, 0, sp.PUSH_CONST, 2, sp.MUL)
    assert (small.dtype, count.dtype, half.dtype) == ("f32", "i32", "f64")
    assert small.extents[0] == (sp.PUSH_INPUT_EXTENT, 0, 0, sp.PUSH_CONST, 8, sp.MIN)
    assert count.extents == ((sp.PUSH_INPUT_EXTENT, 0, 0, sp.PUSH_CONST, 3, sp.MOD,
                              sp.PUSH_CONST, 1, sp.ADD),)
    assert sp.evaluate(half.extents[0], [(9, 16), (18, 16)]) == 5


def _meta(*shape):
    return torch.empty(*shape, device="meta")


def test_symbolic_path_equals_the_kernel_over_many_shapes(module):
    """The shape program, run the way the symbolic path runs it (here over
    ints), gives tf_kernel_output_desc's shapes and dtypes; dim_min, % and //
    included, where a text evaluator needs every operator right."""
    for name in ("pad_rows", "mixed"):
        kernel = module.compile(name, backend="evaluator")
        for s in (1, 2, 3, 7, 8, 9, 100, 4095):
            inputs = [_meta(s, 16)] + ([_meta(2 * s, 16)] if name == "mixed" else [])
            want = [kernel.output_desc([meta._Described(t) for t in inputs], i)
                    for i in range(kernel.num_outputs)]
            got = meta.symbolic_outputs(kernel, inputs)
            assert [(tuple(shape), tf.dtypes.torch_dtype(dt)) for shape, dt in got] == \
                   [(shape, dtype) for dtype, shape in want]


@pytest.mark.parametrize("inputs, message", [
    # A static extent, and the DimVar's range: the old text evaluator checked
    # the first and could not check the second (the text has no ranges).
    ((_meta(5, 15), _meta(10, 16)), r"argument #0 \(x\): axis 1 must be 16, but got 15"),
    ((_meta(4096, 16), _meta(8192, 16)),
     r"axis 0 = 4096 is outside its DimVar's range \[1, 4096\)"),
    # An input axis that is an expression: the old evaluator skipped it.
    ((_meta(5, 16), _meta(9, 16)), r"argument #1 \(y\): axis 0 must be 10, but got 9"),
    # dtype and rank: the old evaluator read neither.
    ((_meta(5, 16), _meta(10, 16).double()),
     r"argument #1 \(y\): dtype must be f32, but got torch.float64"),
    ((_meta(5, 16), _meta(10)), r"argument #1 \(y\): rank must be 2, but got shape \[10\]"),
    ((_meta(5, 16),), r"'mixed' takes 2 input tensor\(s\), but got 1"),
])
def test_symbolic_path_checks_every_binding_rule(module, inputs, message):
    kernel = module.compile("mixed", backend="evaluator")
    with pytest.raises(RuntimeError, match=message):
        meta.symbolic_outputs(kernel, list(inputs))
    # The kernel itself rejects the same inputs.
    if len(inputs) == 2:
        with pytest.raises(RuntimeError):
            for i in range(kernel.num_outputs):
                kernel.output_desc([meta._Described(t) for t in inputs], i)


def test_symbolic_path_checks_a_repeated_dimvar():
    module = tf.load('''from tilefoundry.dsl import *
N = DimVar("N", 1, 64)
@func
def both(a: Tensor[(N, 4), f32], b: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return b
''')
    kernel = module.compile("both", backend="evaluator")
    assert kernel.shape_program().inputs[1].axes[0].rule == sp.EQUALS_DIMVAR
    with pytest.raises(RuntimeError, match=r"argument #1 \(b\): axis 0 is 6, but the DimVar "
                                           r"it names is 5 from argument #0 axis 0"):
        meta.symbolic_outputs(kernel, [_meta(5, 4), _meta(6)])
    assert meta.symbolic_outputs(kernel, [_meta(5, 4), _meta(5)]) == [([5], "f32")]


def _count_compiles(model, lengths, make_inputs):
    """Runs torch.compile(fullgraph=True, dynamic=True) over the lengths,
    checking every result against eager; returns the captured graphs."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(model, backend=backend, fullgraph=True, dynamic=True)
    for s in lengths:
        args = make_inputs(s)
        got, want = compiled(*args), model(*args)
        torch.testing.assert_close(got, want)
    return graphs


def _targets(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


@pytest.mark.skipif(not TORCH2, reason="torch.compile needs torch 2.x (make test-torch2)")
def test_compile_dynamic_captures_once_without_graph_break(ops):
    norm, pad, _ = ops
    w = torch.randn(16)

    def model(x):
        y = norm(x, w)
        big, small = pad(y)
        return big.sum() + small.sum() + y

    graphs = _count_compiles(model, (3, 5, 9, 17, 33), lambda s: (torch.randn(s, 16),))
    assert len(graphs) == 1, "recompiled per sequence length"
    # Both ops are nodes of the one graph, and its input's rows are symbolic.
    for op in (norm, pad):
        assert op in _targets(graphs[0]) or op.default in _targets(graphs[0]), _targets(graphs[0])
    inputs = [n.meta["example_value"] for n in graphs[0].graph.nodes if n.op == "placeholder"]
    rows = [t.shape[0] for t in inputs if isinstance(t, torch.Tensor) and t.dim() == 2]
    assert rows and all(isinstance(r, torch.SymInt) for r in rows), rows


@pytest.mark.skipif(not TORCH2, reason="torch.compile needs torch 2.x (make test-torch2)")
def test_compile_dynamic_once_with_expression_axes_and_mixed_outputs(ops):
    """An input axis that is an expression (S * 2), outputs over dim_min, %
    and //, three outputs of three dtypes: one graph for five lengths, with
    every output extent symbolic."""
    _, _, mixed = ops

    def model(x, y):
        small, count, half = mixed(x, y)
        return small * 2, count, half

    graphs = _count_compiles(model, (3, 5, 10, 17, 33),
                             lambda s: (torch.randn(s, 16), torch.randn(2 * s, 16)))
    assert len(graphs) == 1, "recompiled per sequence length"
    node = next(n for n in graphs[0].graph.nodes
                if n.op == "call_function" and n.target in (mixed, mixed.default))
    outs = node.meta["example_value"]
    assert [t.dtype for t in outs] == [torch.float32, torch.int32, torch.float64]
    assert all(isinstance(t.shape[0], torch.SymInt) for t in outs), [t.shape for t in outs]


@pytest.mark.skipif(not TORCH2, reason="torch.compile needs torch 2.x (make test-torch2)")
def test_compile_dynamic_checks_the_expression_axis(ops):
    """A y whose rows are not 2 * x's: the guard the Meta kernel installed
    rejects it (recompiling to the failing check), the graph does not run."""
    _, _, mixed = ops
    # Not inductor: torch 2.15's lowering of a multi-output op through its
    # .out overload cannot take symbolic sizes (an inductor limitation).
    compiled = torch.compile(lambda x, y: mixed(x, y), backend="aot_eager", fullgraph=True,
                             dynamic=True)
    compiled(torch.randn(5, 16), torch.randn(10, 16))
    with pytest.raises(Exception, match=r"argument #1 \(y\): axis 0 must be"):
        compiled(torch.randn(5, 16), torch.randn(9, 16))


@pytest.mark.skipif(not hasattr(torch.library, "opcheck"),
                    reason="torch.library.opcheck needs torch >= 2.4")
def test_opcheck(ops):
    """Every check opcheck has (schema, autograd registration, FakeTensor,
    AOT dispatch with dynamic shapes) on the ops."""
    norm, pad, mixed = ops
    for op, args in ((norm, (torch.randn(6, 16), torch.randn(16))), (pad, (torch.randn(6, 16),)),
                     (pad, (torch.randn(11, 16),)),
                     (mixed, (torch.randn(7, 16), torch.randn(14, 16)))):
        results = torch.library.opcheck(op.default, args)  # the packet also holds .out
        assert results and set(results.values()) == {"SUCCESS"}, results
