//! The libtorch back-end (feature `tch`): moving tensors to a libtorch device and back, and
//! the operations that run there.

use std::sync::Once;

use tch::{Cuda, Kind};

use crate::backend::{Device, device};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The libtorch device for one of ours (`None` for our own CPU code).
fn tch_device(device: Device) -> Option<tch::Device> {
    match device {
        Device::Cpu => None,
        Device::TorchCpu => Some(tch::Device::Cpu),
        Device::Cuda(i) => Some(tch::Device::Cuda(i)),
    }
}

/// This thread's device if it is a libtorch one: the switch every routed operation reads.
pub(crate) fn current() -> Option<tch::Device> {
    tch_device(device())
}

static LOAD_CUDA: Once = Once::new();

/// Loads `libtorch_cuda.so`. Linkers drop a library that no symbol refers to (rustc links
/// with `--as-needed`), and nothing in tch refers to libtorch's CUDA part by name, so
/// without this libtorch never registers its CUDA kernels and reports no GPU. Loading the
/// library runs its registration. (Linking with
/// `-Wl,--no-as-needed,-ltorch_cuda,--as-needed` does the same at build time.)
fn load_cuda() {
    LOAD_CUDA.call_once(|| {
        // SAFETY: dlopen with a constant, NUL-terminated name; a null handle only means the
        // library is absent, which `Cuda::is_available` then reports.
        unsafe {
            libc::dlopen(
                c"libtorch_cuda.so".as_ptr(),
                libc::RTLD_NOW | libc::RTLD_GLOBAL,
            );
        }
    });
}

/// Checks that libtorch can run on `device`: for CUDA, that a GPU with that index is seen.
pub(crate) fn f_check(device: Device) -> Result<()> {
    if let Device::Cuda(index) = device {
        load_cuda();
        if !Cuda::is_available() {
            return Err(Error::Device {
                detail: format!(
                    "{device} needs a CUDA GPU, but libtorch sees none: check `nvidia-smi`, \
                     that libtorch is a CUDA build with its CUDA libraries on LD_LIBRARY_PATH \
                     (run the `doctor` command), or use --device torch-cpu"
                ),
            });
        }
        let count = Cuda::device_count() as usize;
        if index >= count {
            return Err(Error::Device {
                detail: format!(
                    "{device} does not exist: libtorch sees {count} GPU(s)"
                ),
            });
        }
    }
    Ok(())
}

/// Copies one of our tensors to a libtorch device, keeping its memory layout: a transposed
/// view stays a transposed view, because libtorch (like PyTorch) picks its kernel, and so
/// the order of its additions, by layout.
///
/// # Shapes
/// Same shape on the device.
pub fn to_tch(t: &Tensor, device: tch::Device) -> tch::Tensor {
    let shape: Vec<i64> = t.sizes().iter().map(|&d| d as i64).collect();
    // An expanded tensor goes over as PyTorch holds it: its stored elements, stride 0.
    let array = t.array();
    let strides: Vec<i64> = array.strides().iter().map(|&s| s as i64).collect();
    match array.as_slice_memory_order() {
        // Row-major: a fresh libtorch tensor, with canonical strides (the strides of size-1
        // dims are arbitrary in ndarray and would otherwise steer libtorch's kernel choice).
        Some(values) if t.is_contiguous() => tch::Tensor::from_slice(values)
            .reshape(&shape[..])
            .to_device(device),
        // Dense in another order (a transposed view) with non-negative strides: the first
        // element in memory is element [0, 0, ...], so the same strides describe it.
        Some(values) if strides.iter().all(|&s| s >= 0) => {
            tch::Tensor::from_slice(values)
                .as_strided(&shape[..], &strides[..], None::<i64>)
                .to_device(device)
        }
        // A view with gaps (a narrowed or sliced tensor), non-negative strides: libtorch gets
        // the stretch of memory from its first to its last element and the same strides, so
        // it walks the values as PyTorch walks such a view (its sums add in memory order).
        _ if t.numel() > 0 && strides.iter().all(|&s| s >= 0) => {
            let span = 1 + t
                .sizes()
                .iter()
                .zip(array.strides())
                .map(|(&n, &s)| (n - 1) * s as usize)
                .sum::<usize>();
            // SAFETY: every element of the view lies in the one buffer the view borrows, and
            // with non-negative strides they lie between its first element (the pointer) and
            // its last one, `span - 1` elements further; the buffer lives as long as `t`.
            let memory = unsafe { std::slice::from_raw_parts(array.as_ptr(), span) };
            tch::Tensor::from_slice(memory)
                .as_strided(&shape[..], &strides[..], None::<i64>)
                .to_device(device)
        }
        _ => tch::Tensor::from_slice(&t.to_vec())
            .reshape(&shape[..])
            .to_device(device),
    }
}

/// Copies a libtorch `f32` tensor back into one of ours.
///
/// # Shapes
/// Same shape on the host.
pub fn from_tch(t: &tch::Tensor) -> Tensor {
    let shape: Vec<usize> = t.size().iter().map(|&d| d as usize).collect();
    let mut values = vec![0.0f32; shape.iter().product()];
    copy_to_host(t, &mut values);
    Tensor::from_vec(values, &shape)
}

/// Copies the values of a libtorch tensor, as `f32` in row-major order, into `values`.
fn copy_to_host(t: &tch::Tensor, values: &mut [f32]) {
    let host = t
        .to_device(tch::Device::Cpu)
        .to_kind(Kind::Float)
        .contiguous();
    host.copy_data(values, values.len());
}

/// Runs one libtorch operation for `op` whose result has `numel_of` elements (`numel_of` is
/// a shape with that many elements), and copies the result back.
///
/// The host buffer for the result is taken first, through the crate's one checked
/// allocation ([`crate::alloc::f_alloc`]): a result too large for memory is the same
/// error on every back-end, and libtorch is never asked for it. An error libtorch raises
/// anyway (a GPU out of memory, say) becomes an error naming `op`, not a panic.
///
/// # Shapes
/// Returns the shape libtorch gives the result.
fn f_run(
    op: &'static str,
    numel_of: &[usize],
    compute: impl FnOnce() -> std::result::Result<tch::Tensor, tch::TchError>,
) -> Result<Tensor> {
    let mut values = crate::alloc::f_alloc::<f32>(op, numel_of)?;
    let result = compute().map_err(|e| Error::InvalidArgument {
        op,
        detail: format!("libtorch: {}", first_line(&e.to_string())),
    })?;
    let shape: Vec<usize> = result.size().iter().map(|&d| d as usize).collect();
    // The count asked for and the count computed agree; `resize` keeps the reservation.
    values.resize(shape.iter().product(), 0.0);
    copy_to_host(&result, &mut values);
    Ok(Tensor::from_vec(values, &shape))
}

/// The first line of a libtorch message (the rest is a C++ stack trace).
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or(message)
}

/// Runs a one-operand libtorch operation on `device`; the result has `out_shape`.
///
/// # Shapes
/// `out_shape`: the result's shape, as the caller computed it.
pub(crate) fn f_unary(
    op: &'static str,
    a: &Tensor,
    out_shape: &[usize],
    device: tch::Device,
    compute: impl FnOnce(&tch::Tensor) -> std::result::Result<tch::Tensor, tch::TchError>,
) -> Result<Tensor> {
    f_run(op, out_shape, || compute(&to_tch(a, device)))
}

/// Runs a two-operand libtorch operation on `device`; the result has `out_shape`.
///
/// # Shapes
/// `out_shape`: the result's shape, as the caller computed it.
pub(crate) fn f_binary(
    op: &'static str,
    a: &Tensor,
    b: &Tensor,
    out_shape: &[usize],
    device: tch::Device,
    compute: impl FnOnce(
        &tch::Tensor,
        &tch::Tensor,
    ) -> std::result::Result<tch::Tensor, tch::TchError>,
) -> Result<Tensor> {
    f_run(op, out_shape, || {
        compute(&to_tch(a, device), &to_tch(b, device))
    })
}

/// What libtorch says about itself: see [`crate::backend::LibtorchFacts`].
pub(crate) fn facts() -> crate::backend::LibtorchFacts {
    load_cuda();
    let cuda = Cuda::is_available();
    crate::backend::LibtorchFacts {
        threads: tch::get_num_threads(),
        cuda_devices: cuda.then(Cuda::device_count),
        cudnn: cuda && Cuda::cudnn_is_available(),
    }
}

/// `torch.nn.functional.linear(x, w, b)` on `device`, so a biased layer adds its bias inside
/// the matrix product as PyTorch's `addmm` does.
///
/// # Shapes
/// `x`: `[.., in]`, `weight`: `[out, in]`, `bias`: `[out]`. Returns `[.., out]`.
pub(crate) fn f_linear(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    device: tch::Device,
) -> Result<Tensor> {
    let mut out_shape = x.sizes().to_vec();
    if let (Some(last), Some(&out)) = (out_shape.last_mut(), weight.sizes().first()) {
        *last = out;
    }
    f_run("linear", &out_shape, || {
        let b = bias.map(|b| to_tch(b, device));
        to_tch(x, device).f_linear(&to_tch(weight, device), b.as_ref())
    })
}

/// `torch.einsum(equation, a, b)` on `device`.
///
/// # Shapes
/// `out_shape`: the result's shape, as the caller computed it.
pub(crate) fn f_einsum(
    equation: &str,
    a: &Tensor,
    b: &Tensor,
    out_shape: &[usize],
    device: tch::Device,
) -> Result<Tensor> {
    f_run("einsum", out_shape, || {
        let operands = [to_tch(a, device), to_tch(b, device)];
        tch::Tensor::f_einsum(equation, &operands, None::<&[i64]>)
    })
}
