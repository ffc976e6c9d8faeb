//! The libtorch back-end (feature `tch`): tch's own generator draws what ours draws, the
//! operations agree with ours, the CUDA error path is clear, and `doctor` reports libtorch.
//! Run with `bash scripts/test-tch.sh` (or `cargo test -p shared --features tch` with
//! `source scripts/libtorch-env.sh` first).
#![cfg(feature = "tch")]

use shared::backend::{Device, f_set_device, set_device};
use shared::nn::Dropout;
use shared::{manual_seed, ones, rand, randn, tensor};
use tch::{Kind, Tensor as TchTensor};

fn bits_of_tch(t: &TchTensor) -> Vec<u32> {
    let flat = t.flatten(0, -1).to_kind(Kind::Float);
    let mut values = vec![0.0f32; flat.numel()];
    let n = values.len();
    flat.copy_data(&mut values, n);
    values.iter().map(|v| v.to_bits()).collect()
}

fn bits(t: &shared::Tensor) -> Vec<u32> {
    t.to_vec().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn tch_generator_equals_ours_bit_for_bit() {
    let cpu = (Kind::Float, tch::Device::Cpu);
    for seed in [0u64, 123, 789] {
        for shape in [&[3usize, 2][..], &[16], &[20], &[6, 16], &[1000]] {
            let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            tch::manual_seed(seed as i64);
            let theirs = TchTensor::randn(&dims[..], cpu);
            manual_seed(seed);
            assert_eq!(
                bits(&randn(shape)),
                bits_of_tch(&theirs),
                "randn {shape:?} seed {seed}"
            );
            tch::manual_seed(seed as i64);
            let theirs = TchTensor::rand(&dims[..], cpu);
            manual_seed(seed);
            assert_eq!(
                bits(&rand(shape)),
                bits_of_tch(&theirs),
                "rand {shape:?} seed {seed}"
            );
        }
        for p in [0.1, 0.5] {
            tch::manual_seed(seed as i64);
            let theirs = TchTensor::ones(&[6, 6][..], cpu).dropout(p, true);
            manual_seed(seed);
            let ours = Dropout::new(p).forward(&ones(&[6, 6]));
            assert_eq!(bits(&ours), bits_of_tch(&theirs), "dropout {p} seed {seed}");
        }
    }
}

#[test]
fn operations_on_torch_cpu_agree_with_ours() {
    manual_seed(7);
    let a = randn(&[2, 6, 4]);
    let b = randn(&[4, 3]);
    set_device(Device::Cpu);
    let ours = (
        a.matmul(&b).softmax(-1),
        a.sum_dim(-1, true),
        (&a * &a).exp(),
    );
    set_device(Device::TorchCpu);
    let theirs = (
        a.matmul(&b).softmax(-1),
        a.sum_dim(-1, true),
        (&a * &a).exp(),
    );
    set_device(Device::Cpu);
    for (x, y) in [(ours.0, theirs.0), (ours.1, theirs.1), (ours.2, theirs.2)] {
        assert_eq!(x.sizes(), y.sizes());
        for (u, v) in x.to_vec().iter().zip(y.to_vec()) {
            assert!((u - v).abs() <= 1e-6 * u.abs().max(1.0), "{u} vs {v}");
        }
    }
    // Shape errors are ours on every device.
    set_device(Device::TorchCpu);
    let err = ones(&[6, 3])
        .f_matmul(&ones(&[2, 2]))
        .unwrap_err()
        .to_string();
    set_device(Device::Cpu);
    assert_eq!(
        err,
        "matmul: mat1 and mat2 shapes cannot be multiplied (6x3 and 2x2)"
    );
    let _ = tensor!([1.0]);
}

#[test]
fn cuda_without_a_gpu_is_a_clear_error() {
    let result = f_set_device(Device::Cuda(0));
    if tch::Cuda::is_available() {
        assert!(result.is_ok());
        set_device(Device::Cpu);
        let err = f_set_device(Device::Cuda(999)).unwrap_err().to_string();
        assert!(err.starts_with("device: cuda:999 does not exist"), "{err}");
    } else {
        let err = result.unwrap_err().to_string();
        assert!(
            err.starts_with(
                "device: cuda:0 needs a CUDA GPU, but libtorch sees none"
            ),
            "{err}"
        );
    }
}

#[test]
fn libtorch_describes_itself() {
    let facts =
        shared::backend::libtorch_facts().expect("built with the tch feature");
    assert!(facts.threads >= 1, "{facts:?}");
    assert!(!facts.cudnn || facts.cuda_devices.is_some(), "{facts:?}");
}
