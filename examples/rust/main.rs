//! TileFoundry from Rust with `rustc` only: the C ABI declared by hand
//! (`extern "C"`, `#[repr(C)]`), no crates.
//!
//! Parses examples/c/kernels.tf, runs its rmsnorm kernel on Vec<f32> buffers
//! this program owns, checks the result against an f64 reference, then checks
//! that a wrong input shape is refused with TF_ERR_INVALID_ARGUMENT and leaves
//! the output untouched. Exits nonzero on any error or mismatch.
//!
//! Build and run: bash examples/rust/run.sh [build-dir]   (part of `make demo`)
use std::ffi::{c_char, c_void, CStr};
use std::process::exit;
use std::ptr;

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

type TfStatus = i32; // tf_status is an int-sized enum
const TF_OK: TfStatus = 0;
const TF_ERR_INVALID_ARGUMENT: TfStatus = 5;
const KDL_CPU: i32 = 1;
const KDL_FLOAT: u8 = 2;

#[repr(C)]
struct TfModule {
    _private: [u8; 0],
}
#[repr(C)]
struct TfKernel {
    _private: [u8; 0],
}

#[link(name = "tilefoundry")]
extern "C" {
    fn tf_abi_version() -> u32;
    fn tf_last_error() -> *const c_char;
    fn tf_status_name(s: TfStatus) -> *const c_char;
    fn tf_module_parse(src: *const c_char, len: usize, filename: *const c_char,
                       out: *mut *mut TfModule) -> TfStatus;
    fn tf_module_release(m: *mut TfModule);
    fn tf_kernel_compile(m: *mut TfModule, fn_name: *const c_char, opts: *const c_void,
                         out: *mut *mut TfKernel) -> TfStatus;
    fn tf_kernel_run(k: *mut TfKernel, inputs: *const DLTensor, n_in: usize,
                     outputs: *mut DLTensor, n_out: usize) -> TfStatus;
    fn tf_kernel_release(k: *mut TfKernel);
}

const ROWS: usize = 6;
const D: usize = 64; // kernels.tf fixes D = 64

fn message(s: TfStatus) -> String {
    // SAFETY: both functions return NUL-terminated strings that live at least
    // until the next tf_* call on this thread.
    unsafe {
        format!("{}: {}", CStr::from_ptr(tf_status_name(s)).to_string_lossy(),
                CStr::from_ptr(tf_last_error()).to_string_lossy())
    }
}

fn check(s: TfStatus, what: &str) {
    if s != TF_OK {
        eprintln!("{}: {}", what, message(s));
        exit(1);
    }
}

/// A compact row-major f32 CPU tensor borrowing `data` and `shape`.
fn f32_tensor(data: &mut [f32], shape: &mut [i64]) -> DLTensor {
    DLTensor {
        data: data.as_mut_ptr() as *mut c_void,
        device: DLDevice { device_type: KDL_CPU, device_id: 0 },
        ndim: shape.len() as i32,
        dtype: DLDataType { code: KDL_FLOAT, bits: 32, lanes: 1 },
        shape: shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    }
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or("examples/c/kernels.tf".into());
    let src = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("{}: {}", path, e);
        exit(1)
    });
    let mut x: Vec<f32> = (0..ROWS * D).map(|i| ((i * 37 % 101) as f32) / 25.0 - 2.0).collect();
    let mut w: Vec<f32> = (0..D).map(|i| 0.5 + (i % 7) as f32 / 7.0).collect();
    let mut y = vec![0f32; ROWS * D];
    let (mut xs, mut ws, mut ys) = ([ROWS as i64, D as i64], [D as i64], [ROWS as i64, D as i64]);

    let mut module: *mut TfModule = ptr::null_mut();
    let mut kernel: *mut TfKernel = ptr::null_mut();
    let fname = b"kernels.tf\0";
    // SAFETY: every pointer passed below is valid for the call; the buffers
    // outlive the kernel runs that borrow them.
    unsafe {
        check(tf_module_parse(src.as_ptr() as *const c_char, src.len(),
                              fname.as_ptr() as *const c_char, &mut module), "parse");
        check(tf_kernel_compile(module, b"rmsnorm\0".as_ptr() as *const c_char, ptr::null(),
                                &mut kernel), "compile");
        let inputs = [f32_tensor(&mut x, &mut xs), f32_tensor(&mut w, &mut ws)];
        let mut outputs = [f32_tensor(&mut y, &mut ys)];
        check(tf_kernel_run(kernel, inputs.as_ptr(), 2, outputs.as_mut_ptr(), 1), "run");
    }

    let mut max_err = 0f64;
    for r in 0..ROWS {
        let row = &x[r * D..(r + 1) * D];
        let ms: f64 = row.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>() / D as f64;
        for c in 0..D {
            let want = row[c] as f64 / (ms + 1e-6).sqrt() * w[c] as f64;
            max_err = max_err.max((y[r * D + c] as f64 - want).abs() / (1.0 + want.abs()));
        }
    }

    // A wrong static extent (63 instead of 64) must be refused, output untouched.
    let before = y.clone();
    let mut bad_ws = [63i64];
    let status = unsafe {
        let inputs = [f32_tensor(&mut x, &mut xs), f32_tensor(&mut w, &mut bad_ws)];
        let mut outputs = [f32_tensor(&mut y, &mut ys)];
        tf_kernel_run(kernel, inputs.as_ptr(), 2, outputs.as_mut_ptr(), 1)
    };
    let refused = status == TF_ERR_INVALID_ARGUMENT && y == before;
    unsafe {
        tf_kernel_release(kernel);
        tf_module_release(module);
    }
    let v = unsafe { tf_abi_version() };
    println!("rust: ABI {}.{}, rmsnorm max rel err {:.2e}, bad shape refused: {} ({})",
             v >> 16, v & 0xffff, max_err, refused, message(status));
    if max_err > 1e-5 || !refused {
        eprintln!("rust: mismatch");
        exit(1);
    }
    println!("rust: all kernels match the reference");
}
