"""Sharded kernels across processes on torch.distributed.

A kernel whose types carry ShardLayouts over a device mesh runs SPMD: on
every rank of a torch.distributed job, call it with

* DTensors (torch 2.x) on a DeviceMesh of the kernel's mesh shape, whose
  placements equal the parameters' (Shard(d) = Split(axis=d), Replicate() =
  Broadcast(), Partial(op) = Partial(op)); the results are DTensors with the
  placements of the return type (a Partial result stays Partial); or
* each rank's local shares as plain tensors and ``mesh=`` a DeviceMesh, a
  ProcessGroup (a 1-D mesh) or a sequence of ProcessGroups, one per mesh
  axis, each listing the ranks of that axis in coordinate order; the results
  are local tensors.

Values cross ranks through a tf_communicator whose collectives are
torch.distributed's, over each mesh axis's process group: Gloo for CPU
tensors. The library (tf_kernel_call_rank) decides which collective each
Reshard needs; this module only moves bytes.

Before anything else the ranks check that they make the same call (one
all-gather of 8 bytes per mesh axis), so that ranks running other kernels
or shapes fail together instead of hanging. ``check_calls=False`` skips it
for a program known to run in lockstep (as DTensor assumes): one collective
round trip less per call.
"""
import ctypes
import math

from . import _lib
from ._dlpack import DLManagedTensor, DLTensor, Owned
from .dtypes import torch_dtype_from_dl
from .kernel import _is_dtensor


class MeshSignature:
    """A kernel's device mesh (axis names and extents) and each input's and
    output's state per mesh axis, as tf_shard_attr-like tuples
    (kind, tensor_axis, reduction name)."""

    def __init__(self, kernel):
        L = _lib.lib()
        n = ctypes.c_int32()
        _lib.check(L.tf_kernel_mesh_rank(kernel._handle, ctypes.byref(n)), kernel.name)
        self.axes, self.shape = [], []
        for m in range(n.value):
            extent, name = ctypes.c_int64(), ctypes.c_char_p()
            _lib.check(L.tf_kernel_mesh_axis(kernel._handle, m, ctypes.byref(extent), ctypes.byref(name)),
                       kernel.name)
            self.axes.append(name.value.decode())
            self.shape.append(extent.value)
        self.inputs = [self._attrs(L.tf_kernel_input_shard, kernel, i) for i in range(kernel.num_inputs)]
        self.outputs = [self._attrs(L.tf_kernel_output_shard, kernel, i) for i in range(kernel.num_outputs)]

    def _attrs(self, fn, kernel, i):
        out = []
        for m in range(len(self.shape)):
            a = _lib.ShardAttr()
            _lib.check(fn(kernel._handle, i, m, ctypes.byref(a)), kernel.name)
            red = _lib.TF_REDUCTION_NAMES[a.reduction] if a.kind == _lib.TF_SHARD_PARTIAL else None
            out.append((a.kind, a.tensor_axis, red))
        return out


def describe(attr):
    kind, axis, red = attr
    if kind == _lib.TF_SHARD_SPLIT:
        return f"Split(axis={axis})"
    if kind == _lib.TF_SHARD_PARTIAL:
        return f'Partial("{red}")'
    return "Broadcast()"


def signature_of(kernel):
    sig = getattr(kernel, "_mesh_signature", None)
    if sig is None:
        sig = MeshSignature(kernel)
        kernel._mesh_signature = sig
    return sig


# ---- the collectives, over torch.distributed

_STATS = {"collectives": 0, "bytes": 0}


def stats():
    """What this process's sharded kernel calls have asked of torch.distributed
    since it started: the number of collectives, and the bytes this rank
    passed to them (each collective's input buffer)."""
    return dict(_STATS)


def _count(t):
    _STATS["collectives"] += 1
    _STATS["bytes"] += t.numel() * t.element_size()

def _as_torch(t: DLTensor):
    """A 1-D torch tensor viewing a contiguous DLTensor's memory (no copy)."""
    import torch
    n = math.prod(t.shape[k] for k in range(t.ndim))
    dtype = torch_dtype_from_dl(t.dtype)
    if n == 0:
        return torch.empty(0, dtype=dtype)
    nbytes = n * torch.empty(0, dtype=dtype).element_size()
    buf = (ctypes.c_char * nbytes).from_address(t.data + t.byte_offset)
    return torch.frombuffer(buf, dtype=dtype, count=n)


def _write_error(err, errlen, exc):
    msg = f"{type(exc).__name__}: {exc}".encode(errors="replace")[: max(errlen - 1, 0)]
    ctypes.memmove(err, msg + b"\0", len(msg) + 1)


# (backend, collective) pairs whose "into tensor" form the process's torch
# lacks (Gloo in older torch): those collectives are built from all_gather /
# all_reduce instead, the same result in more bytes. Learned once per
# process: a failed attempt costs as much as the collective.
_LACKS_INTO_FORM = set()


class TorchCommunicator:
    """A tf_communicator over one process group per mesh axis. `groups[m]`
    lists the ranks of mesh axis m in coordinate order; `coords[m]` is this
    rank's coordinate on it."""

    def __init__(self, groups, coords, trusted=False):
        import torch.distributed as dist
        self._dist = dist
        self.groups, self.coords = list(groups), list(coords)
        self.sizes = [dist.get_world_size(g) for g in self.groups]
        self._ops = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
        n = len(self.groups)
        self._size_arr = (ctypes.c_int64 * max(n, 1))(*self.sizes)
        self._coord_arr = (ctypes.c_int64 * max(n, 1))(*self.coords)
        # The ctypes callbacks must live as long as the struct.
        self._fns = (_lib.ALL_REDUCE_FN(self._all_reduce), _lib.MOVE_FN(self._all_gather),
                     _lib.REDUCE_SCATTER_FN(self._reduce_scatter), _lib.MOVE_FN(self._all_to_all))
        c = _lib.Communicator()
        c.struct_size = ctypes.sizeof(_lib.Communicator)
        c.num_axes = n
        c.axis_size = ctypes.cast(self._size_arr, ctypes.POINTER(ctypes.c_int64))
        c.axis_coord = ctypes.cast(self._coord_arr, ctypes.POINTER(ctypes.c_int64))
        c.all_reduce, c.all_gather, c.reduce_scatter, c.all_to_all = self._fns
        c.flags = _lib.TF_COMM_TRUSTED_CALLS if trusted else 0
        self.struct = c

    def close(self):
        """Drops the callbacks and the process groups. The callbacks are bound
        methods (a reference cycle); left to the garbage collector, the last
        reference to a process group could outlive destroy_process_group and
        be destroyed during interpreter shutdown, which aborts the process."""
        self._fns = None
        self.struct = None
        self.groups = None

    def _guard(self, body, err, errlen):
        try:
            body()
            return 0
        except BaseException as e:  # noqa: BLE001 -- nothing may unwind into C
            _write_error(err, errlen, e)
            return 1

    def _try(self, name, axis, fast, slow):
        key = (str(self._dist.get_backend(self.groups[axis])), name)
        if key not in _LACKS_INTO_FORM:
            try:
                return fast()
            except RuntimeError as e:
                if "support" not in str(e).lower():
                    raise
                _LACKS_INTO_FORM.add(key)
        return slow()

    def _all_reduce(self, ctx, axis, buf, reduction, err, errlen):
        def body():
            t = _as_torch(buf.contents)
            _count(t)
            self._dist.all_reduce(t, op=self._ops[_lib.TF_REDUCTION_NAMES[reduction]], group=self.groups[axis])
        return self._guard(body, err, errlen)

    def _gather_into(self, axis, out, t):
        g = self.groups[axis]
        self._try("all_gather", axis, lambda: self._dist.all_gather_into_tensor(out, t, group=g),
                  lambda: self._dist.all_gather(list(out.chunk(self.sizes[axis])), t, group=g))

    def _all_gather(self, ctx, axis, src, dst, err, errlen):
        def body():
            t = _as_torch(src.contents)
            _count(t)
            self._gather_into(axis, _as_torch(dst.contents), t)
        return self._guard(body, err, errlen)

    def _reduce_scatter(self, ctx, axis, src, dst, reduction, err, errlen):
        def body():
            g, op = self.groups[axis], self._ops[_lib.TF_REDUCTION_NAMES[reduction]]
            t, out = _as_torch(src.contents), _as_torch(dst.contents)
            _count(t)

            def slow():
                full = t.clone()
                self._dist.all_reduce(full, op=op, group=g)
                out.copy_(full.chunk(self.sizes[axis])[self.coords[axis]])
            self._try("reduce_scatter", axis, lambda: self._dist.reduce_scatter_tensor(out, t, op=op, group=g), slow)
        return self._guard(body, err, errlen)

    def _all_to_all(self, ctx, axis, src, dst, err, errlen):
        def body():
            g, n = self.groups[axis], self.sizes[axis]
            t, out = _as_torch(src.contents), _as_torch(dst.contents)
            _count(t)

            def slow():
                import torch
                every = torch.empty(n * t.numel(), dtype=t.dtype)
                self._gather_into(axis, every, t)
                mine = self.coords[axis]
                for i, block in enumerate(every.chunk(n)):
                    out.chunk(n)[i].copy_(block.chunk(n)[mine])
            self._try("all_to_all", axis, lambda: self._dist.all_to_all_single(out, t, group=g), slow)
        return self._guard(body, err, errlen)


# ---- meshes: DeviceMesh, ProcessGroup, or one group per axis

def _mesh_axes(sig, mesh, what):
    """(groups, coords) per kernel mesh axis from a DeviceMesh, a
    ProcessGroup or a sequence of ProcessGroups."""
    import torch.distributed as dist
    if type(mesh).__name__ == "DeviceMesh":
        if tuple(mesh.mesh.shape) != tuple(sig.shape):
            raise ValueError(f"{what}: the kernel runs on a mesh of shape {tuple(sig.shape)} (axes "
                             f"{tuple(sig.axes)}), but the DeviceMesh has shape {tuple(mesh.mesh.shape)}")
        names = getattr(mesh, "mesh_dim_names", None)
        dims = list(range(len(sig.shape)))
        if names:
            missing = [a for a in sig.axes if a not in names]
            if missing:
                raise ValueError(f"{what}: the kernel's mesh axes are {tuple(sig.axes)}, but the DeviceMesh's "
                                 f"dimensions are named {tuple(names)}")
            dims = [list(names).index(a) for a in sig.axes]
            if [mesh.mesh.shape[d] for d in dims] != list(sig.shape):
                raise ValueError(f"{what}: the DeviceMesh's dimensions {tuple(names)} have extents "
                                 f"{tuple(mesh.mesh.shape)}, the kernel's axes {tuple(sig.axes)} {tuple(sig.shape)}")
        coord = mesh.get_coordinate()
        if coord is None:
            raise ValueError(f"{what}: this rank is not in the DeviceMesh")
        return [mesh.get_group(d) for d in dims], [coord[d] for d in dims], dims
    groups = [mesh] if isinstance(mesh, dist.ProcessGroup) else list(mesh)
    if len(groups) != len(sig.shape):
        raise ValueError(f"{what}: the kernel's mesh has {len(sig.shape)} axes {tuple(sig.axes)}, but "
                         f"{len(groups)} process group(s) were given")
    for m, g in enumerate(groups):
        if dist.get_world_size(g) != sig.shape[m]:
            raise ValueError(f"{what}: mesh axis {m} ('{sig.axes[m]}') has {sig.shape[m]} ranks, but its "
                             f"process group has {dist.get_world_size(g)}")
    return groups, [dist.get_rank(g) for g in groups], list(range(len(groups)))


def _placement_matches(p, attr):
    kind, axis, red = attr
    name = type(p).__name__
    if name == "Shard":
        return kind == _lib.TF_SHARD_SPLIT and p.dim == axis
    if name == "Replicate":
        return kind == _lib.TF_SHARD_BROADCAST
    if name == "Partial" or name == "_Partial":
        return kind == _lib.TF_SHARD_PARTIAL and getattr(p, "reduce_op", "sum") == red
    return False


def _placement_of(attr):
    from torch.distributed.tensor import Partial, Replicate, Shard
    kind, axis, red = attr
    if kind == _lib.TF_SHARD_SPLIT:
        return Shard(axis)
    if kind == _lib.TF_SHARD_PARTIAL:
        return Partial(red)
    return Replicate()


def call(kernel, tensors, mesh=None, check_calls=True):
    """Runs this rank of a sharded kernel (see the module docstring)."""
    sig = signature_of(kernel)
    dts = [i for i, t in enumerate(tensors) if _is_dtensor(t)]
    names = kernel.input_names()
    if not sig.shape:
        if dts:
            i = dts[0]
            raise TypeError(f"{kernel.name}: argument #{i} ({names[i]}) is a DTensor, but the kernel has no device "
                            "mesh (its types carry no ShardLayout); pass a plain tensor (full_tensor() or "
                            "to_local())")
        raise TypeError(f"{kernel.name}: the kernel has no device mesh (its types carry no ShardLayout), so it "
                        "takes no mesh=; call it with plain tensors")
    if dts:
        if len(dts) != len(tensors):
            i = next(i for i in range(len(tensors)) if i not in dts)
            raise TypeError(f"{kernel.name}: argument #{i} ({names[i]}) is a plain tensor among DTensors; pass "
                            "every argument as a DTensor on the same DeviceMesh, or local shares with mesh=")
        mesh = tensors[0].device_mesh if mesh is None else mesh
    elif mesh is None:
        raise TypeError(f"{kernel.name}: a sharded kernel needs mesh= (a DeviceMesh or process groups) with "
                        "local shares, or DTensors")
    groups, coords, dims = _mesh_axes(sig, mesh, kernel.name)
    locals_ = []
    for i, t in enumerate(tensors):
        if _is_dtensor(t):
            if t.device_mesh != mesh:
                raise ValueError(f"{kernel.name}: argument #{i} ({names[i]}) is on another DeviceMesh")
            for m, attr in enumerate(sig.inputs[i]):
                p = t.placements[dims[m]]
                if not _placement_matches(p, attr):
                    raise ValueError(f"{kernel.name}: argument #{i} ({names[i]}) on mesh axis {m} "
                                     f"('{sig.axes[m]}'): the kernel declares {describe(attr)}, but the DTensor's "
                                     f"placement is {p}")
            t = t.to_local()
        locals_.append(t)
    ins = kernel.borrow_inputs(locals_)  # refuses other tensor subclasses without data, by name
    arr = (DLTensor * max(len(ins), 1))()
    for i, b in enumerate(ins):
        arr[i] = b.tensor
    n = kernel.num_outputs
    outs = (ctypes.POINTER(DLManagedTensor) * max(n, 1))()
    # The rank's compiled segments use torch's intra-op thread count, as the
    # torch operators do: ranks sharing a machine must not oversubscribe it.
    import torch
    _lib.check(_lib.lib().tf_set_num_threads(torch.get_num_threads()), "set_num_threads")
    comm = TorchCommunicator(groups, coords, trusted=not check_calls)
    try:
        status = _lib.lib().tf_kernel_call_rank(kernel._handle, arr, len(ins), outs, n, ctypes.byref(comm.struct))
    finally:
        comm.close()
    _lib.check(status, kernel.name)
    from torch.utils import dlpack as torch_dlpack
    results = [torch_dlpack.from_dlpack(Owned(ctypes.cast(outs[j], ctypes.c_void_p).value).__dlpack__())
               for j in range(n)]
    if dts:
        results = [_to_dtensor(r, sig, j, mesh, dims) for j, r in enumerate(results)]
    return results[0] if n == 1 else tuple(results)


def _to_dtensor(local, sig, j, mesh, dims):
    from torch.distributed.tensor import DTensor
    placements = [None] * len(dims)
    shape = list(local.shape)
    for m, attr in enumerate(sig.outputs[j]):
        placements[dims[m]] = _placement_of(attr)
        if attr[0] == _lib.TF_SHARD_SPLIT:
            shape[attr[1]] *= sig.shape[m]
    stride = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    return DTensor.from_local(local, mesh, placements, run_check=False, shape=tuple(shape), stride=tuple(stride))
