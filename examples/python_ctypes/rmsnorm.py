"""TileFoundry from Python through ctypes only: no torch, no numpy.

Declares the C ABI's structs and functions by hand, parses
examples/c/kernels.tf, runs its rmsnorm and swiglu kernels on buffers this
script allocates, checks them against a pure-Python reference, and exits
nonzero on any error or mismatch.

Library: $TILEFOUNDRY_LIB_DIR/libtilefoundry.so (default: build/lib).
Run: python3 examples/python_ctypes/rmsnorm.py   (part of `make demo`)
"""
import ctypes as C
import math
import os
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parent / "c" / "kernels.tf"
ROWS, D = 5, 64  # kernels.tf fixes D = 64
TOLERANCE = 1e-5


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


KDL_CPU, KDL_FLOAT = 1, 2
TF_OK = 0
BACKENDS = {0: "native", 1: "evaluator", 2: "virtual mesh"}


def load():
    lib_dir = Path(os.environ.get("TILEFOUNDRY_LIB_DIR", HERE.parents[1] / "build" / "lib"))
    lib = C.CDLL(str(lib_dir / "libtilefoundry.so"))
    handle = C.c_void_p
    sigs = {
        "tf_abi_version": (C.c_uint32, []),
        "tf_last_error": (C.c_char_p, []),
        "tf_status_name": (C.c_char_p, [C.c_int]),
        "tf_module_parse": (C.c_int, [C.c_char_p, C.c_size_t, C.c_char_p, C.POINTER(handle)]),
        "tf_module_release": (None, [handle]),
        "tf_kernel_compile": (C.c_int, [handle, C.c_char_p, C.c_void_p, C.POINTER(handle)]),
        "tf_kernel_backend": (C.c_int, [handle, C.POINTER(C.c_int32)]),
        "tf_kernel_run": (C.c_int, [handle, C.POINTER(DLTensor), C.c_size_t,
                                    C.POINTER(DLTensor), C.c_size_t]),
        "tf_kernel_release": (None, [handle]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


def check(lib, status, what):
    if status != TF_OK:
        sys.exit("%s: %s: %s" % (what, lib.tf_status_name(status).decode(),
                                 lib.tf_last_error().decode()))


def f32_tensor(buf, shape):
    """A compact row-major f32 CPU tensor over a ctypes float array."""
    dims = (C.c_int64 * len(shape))(*shape)
    t = DLTensor(C.cast(buf, C.c_void_p), DLDevice(KDL_CPU, 0), len(shape),
                 DLDataType(KDL_FLOAT, 32, 1), dims, None, 0)
    t._keep = (buf, dims)  # the arrays must outlive the tensor
    return t


def run(lib, module, name, inputs, out_shape, backends):
    k = C.c_void_p()
    check(lib, lib.tf_kernel_compile(module, name.encode(), None, C.byref(k)), name)
    backend = C.c_int32()
    check(lib, lib.tf_kernel_backend(k, C.byref(backend)), "tf_kernel_backend(%s)" % name)
    backends[name] = BACKENDS.get(backend.value, str(backend.value))
    n = math.prod(out_shape)
    y = (C.c_float * n)()
    ins = (DLTensor * len(inputs))(*[f32_tensor(b, s) for b, s in inputs])
    outs = (DLTensor * 1)(f32_tensor(y, out_shape))
    check(lib, lib.tf_kernel_run(k, ins, len(inputs), outs, 1), "tf_kernel_run(%s)" % name)
    lib.tf_kernel_release(k)
    return list(y)


def max_rel_err(got, want):
    return max(abs(g - w) / (1 + abs(w)) for g, w in zip(got, want))


def main():
    lib = load()
    src = KERNELS.read_bytes()
    module = C.c_void_p()
    check(lib, lib.tf_module_parse(src, len(src), str(KERNELS).encode(), C.byref(module)), "parse")
    rng = random.Random(0)
    x = [rng.uniform(-2, 2) for _ in range(ROWS * D)]
    w = [rng.uniform(0.5, 1.5) for _ in range(D)]
    xb, wb = (C.c_float * len(x))(*x), (C.c_float * D)(*w)
    x = list(xb)  # the f32-rounded values the kernel sees
    w = list(wb)

    backends = {}
    got = run(lib, module, "rmsnorm", [(xb, (ROWS, D)), (wb, (D,))], (ROWS, D), backends)
    want = []
    for r in range(ROWS):
        row = x[r * D:(r + 1) * D]
        scale = 1 / math.sqrt(sum(v * v for v in row) / D + 1e-6)
        want += [v * scale * w[c] for c, v in enumerate(row)]
    err_norm = max_rel_err(got, want)

    got = run(lib, module, "swiglu", [(xb, (ROWS, D)), (xb, (ROWS, D))], (ROWS, D), backends)
    want = [v / (1 + math.exp(-v)) * v for v in x]
    err_glu = max_rel_err(got, want)

    lib.tf_module_release(module)
    print("python_ctypes: ABI %d.%d, rmsnorm max rel err %.2e, swiglu max rel err %.2e"
          % (lib.tf_abi_version() >> 16, lib.tf_abi_version() & 0xFFFF, err_norm, err_glu))
    print("python_ctypes: backends: " + ", ".join("%s %s" % kv for kv in sorted(backends.items())))
    if max(err_norm, err_glu) > TOLERANCE:
        sys.exit("python_ctypes: mismatch above %g" % TOLERANCE)
    print("python_ctypes: all kernels match the reference")


if __name__ == "__main__":
    main()
