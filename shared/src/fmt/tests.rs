//! Examples of PyTorch's print rules, end to end: each one was checked against real
//! PyTorch output.

use super::{Size, Suffixes, Values, format_tensor};

fn f32s(values: &[f32], shape: &[usize]) -> String {
    format_tensor(Values::F32(values), shape, &Suffixes::default())
}

fn with_grad(values: &[f32], shape: &[usize], grad_fn: Option<&str>) -> String {
    let suffixes = Suffixes {
        requires_grad: true,
        grad_fn: grad_fn.map(String::from),
    };
    format_tensor(Values::F32(values), shape, &suffixes)
}

/// 0, 1, 2, … as f32.
fn arange(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

#[test]
fn zero_dimensional_tensors() {
    assert_eq!(f32s(&[0.1376], &[]), "tensor(0.1376)");
    assert_eq!(f32s(&[3.0], &[]), "tensor(3.)");
    assert_eq!(f32s(&[-0.0], &[]), "tensor(-0.)");
    assert_eq!(f32s(&[f32::NAN], &[]), "tensor(nan)");
    assert_eq!(f32s(&[1e-5], &[]), "tensor(1.0000e-05)");
    assert_eq!(f32s(&[1e9], &[]), "tensor(1.0000e+09)");
    assert_eq!(f32s(&[1e8], &[]), "tensor(100000000.)");
    let seven = format_tensor(Values::I64(&[7]), &[], &Suffixes::default());
    assert_eq!(seven, "tensor(7)");
    let yes = format_tensor(Values::Bool(&[true]), &[], &Suffixes::default());
    assert_eq!(yes, "tensor(True)");
    let five = format_tensor(Values::I32(&[5]), &[], &Suffixes::default());
    assert_eq!(five, "tensor(5, dtype=torch.int32)");
}

#[test]
fn threshold_table() {
    assert_eq!(f32s(&[1e-4], &[]), "tensor(1.0000e-04)");
    let above = f32::from_bits(1e-4_f32.to_bits() + 1);
    assert_eq!(f32s(&[above], &[]), "tensor(0.0001)");
    assert_eq!(f32s(&[1.0, 1000.0], &[2]), "tensor([   1., 1000.])");
    assert_eq!(
        f32s(&[1.0, 1001.0], &[2]),
        "tensor([1.0000e+00, 1.0010e+03])"
    );
    assert_eq!(f32s(&[0.001, 1.0], &[2]), "tensor([0.0010, 1.0000])");
    assert_eq!(
        f32s(&[0.01, 10.0], &[2]),
        "tensor([1.0000e-02, 1.0000e+01])"
    );
    assert_eq!(f32s(&[0.1, 100.0], &[2]), "tensor([  0.1000, 100.0000])");
    assert_eq!(f32s(&[100_000_008.0], &[]), "tensor(1.0000e+08)");
    assert_eq!(f32s(&[9.99995, 1.0], &[2]), "tensor([10.0000,  1.0000])");
    let f64_tiny = format_tensor(Values::F64(&[1e-4]), &[], &Suffixes::default());
    assert_eq!(f64_tiny, "tensor(0.0001, dtype=torch.float64)");
    assert_eq!(
        f32s(&[16_777_216.0, 1e8], &[2]),
        "tensor([ 16777216., 100000000.])"
    );
}

#[test]
fn cells_outside_s_are_not_padded_to_fit() {
    assert_eq!(f32s(&[1.0, f32::NEG_INFINITY], &[2]), "tensor([1., -inf])");
    assert_eq!(
        f32s(&[f32::NAN, f32::INFINITY, 0.0], &[3]),
        "tensor([nan, inf, 0.])"
    );
    assert_eq!(f32s(&[-0.0, 0.5], &[2]), "tensor([-0.0000, 0.5000])");
    assert_eq!(f32s(&[-0.0, 0.0], &[2]), "tensor([-0., 0.])");
    let negative_nan = f32::from_bits(0xffc0_0000);
    assert_eq!(f32s(&[negative_nan], &[1]), "tensor([nan])");
}

#[test]
fn integer_and_bool_tensors() {
    let ints =
        |v: &[i64]| format_tensor(Values::I64(v), &[v.len()], &Suffixes::default());
    assert_eq!(ints(&[0, 4, 5, 2, 1, 3]), "tensor([0, 4, 5, 2, 1, 3])");
    assert_eq!(ints(&[-1, 10]), "tensor([-1, 10])");
    let bools =
        format_tensor(Values::Bool(&[true, false]), &[2], &Suffixes::default());
    assert_eq!(bools, "tensor([ True, False])");
    let int32 = format_tensor(Values::I32(&[1, 2]), &[2], &Suffixes::default());
    assert_eq!(int32, "tensor([1, 2], dtype=torch.int32)");
    let float64 = format_tensor(Values::F64(&[1.0, 2.0]), &[2], &Suffixes::default());
    assert_eq!(float64, "tensor([1., 2.], dtype=torch.float64)");
}

#[test]
fn wrapped_vector_continues_under_the_first_cell() {
    let values: Vec<f32> = (0..20).map(|i| i as f32 / 19.0).collect();
    let expected = "\
tensor([0.0000, 0.0526, 0.1053, 0.1579, 0.2105, 0.2632, 0.3158, 0.3684, 0.4211,
        0.4737, 0.5263, 0.5789, 0.6316, 0.6842, 0.7368, 0.7895, 0.8421, 0.8947,
        0.9474, 1.0000])";
    assert_eq!(f32s(&values, &[20]), expected);
}

#[test]
fn blocks_are_separated_by_blank_lines() {
    let expected_3d = "\
tensor([[[ 0.,  1.,  2.],
         [ 3.,  4.,  5.]],

        [[ 6.,  7.,  8.],
         [ 9., 10., 11.]]])";
    assert_eq!(f32s(&arange(12), &[2, 2, 3]), expected_3d);

    let values: Vec<i64> = (0..16).collect();
    let expected_4d = "\
tensor([[[[ 0,  1],
          [ 2,  3]],

         [[ 4,  5],
          [ 6,  7]]],


        [[[ 8,  9],
          [10, 11]],

         [[12, 13],
          [14, 15]]]])";
    let got =
        format_tensor(Values::I64(&values), &[2, 2, 2, 2], &Suffixes::default());
    assert_eq!(got, expected_4d);
}

#[test]
fn summarisation_starts_above_1000_elements() {
    let values: Vec<i64> = (0..2000).collect();
    let got = format_tensor(Values::I64(&values), &[2000], &Suffixes::default());
    assert_eq!(got, "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");

    // 1000 elements print in full; 1001 are summarised.
    assert!(!f32s(&arange(1000), &[1000]).contains("..."));
    assert!(f32s(&arange(1001), &[1001]).contains(" ..., "));

    // Hidden values take no part in the formatter.
    let mut hidden = vec![1.0_f32; 2000];
    hidden[1000] = f32::NAN;
    hidden[1001] = 1e20;
    assert_eq!(
        f32s(&hidden, &[2000]),
        "tensor([1., 1., 1.,  ..., 1., 1., 1.])"
    );
}

#[test]
fn summarised_matrix_keeps_short_dimensions_whole() {
    let values: Vec<f32> = (0..1005).map(|i| i as f32 / 7.0).collect();
    let got = f32s(&values, &[201, 5]);
    let expected = "\
tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01, 4.2857e-01, 5.7143e-01],
        [7.1429e-01, 8.5714e-01, 1.0000e+00, 1.1429e+00, 1.2857e+00],
        [1.4286e+00, 1.5714e+00, 1.7143e+00, 1.8571e+00, 2.0000e+00],
        ...,
        [1.4143e+02, 1.4157e+02, 1.4171e+02, 1.4186e+02, 1.4200e+02],
        [1.4214e+02, 1.4229e+02, 1.4243e+02, 1.4257e+02, 1.4271e+02],
        [1.4286e+02, 1.4300e+02, 1.4314e+02, 1.4329e+02, 1.4343e+02]])";
    assert_eq!(got, expected);

    // (5, 201): five rows, each cut to 3 + 3 cells around the 4-character ` ...` cell.
    let values: Vec<f32> = (0..1005).map(|i| (i % 201) as f32).collect();
    let got = f32s(&values, &[5, 201]);
    assert_eq!(got.lines().count(), 5);
    assert!(got.starts_with("tensor([[  0.,   1.,   2.,  ..., 198., 199., 200.],\n"));
    assert!(got.lines().all(|line| line.contains(",  ..., ")));
}

#[test]
fn summarised_3d_has_blank_lines_around_the_ellipsis() {
    let got = f32s(&arange(7 * 2 * 80), &[7, 2, 80]);
    let blocks: Vec<&str> = got.split(",\n\n").collect();
    assert_eq!(blocks.len(), 7);
    assert_eq!(blocks[3], "        ...");
}

#[test]
fn suffix_goes_to_its_own_line_past_76_columns() {
    let seven = [0.5032, 0.6669, 0.8432, 0.7675, 0.9940, 0.6701, 0.9173];
    assert_eq!(
        with_grad(&seven, &[7], None),
        "tensor([0.5032, 0.6669, 0.8432, 0.7675, 0.9940, 0.6701, 0.9173],\n       requires_grad=True)"
    );
    let six = [0.2011, 0.0455, 0.9503, 0.5437, 0.3170, 0.3736];
    assert_eq!(
        with_grad(&six, &[6], Some("MulBackward0")),
        "tensor([0.2011, 0.0455, 0.9503, 0.5437, 0.3170, 0.3736],\n       grad_fn=<MulBackward0>)"
    );
    let six = [0.9416, 0.0933, 0.8172, 0.0613, 0.7317, 0.6571];
    assert_eq!(
        with_grad(&six, &[6], None),
        "tensor([0.9416, 0.0933, 0.8172, 0.0613, 0.7317, 0.6571], requires_grad=True)"
    );
    let rows: [f64; 16] = [
        0.2151, 0.9466, 0.1289, 0.5808, 0.9035, 0.8554, 0.9968, 0.4093, 0.3238,
        0.3659, 0.6303, 0.3005, 0.9155, 0.2884, 0.5053, 0.3331,
    ];
    let expected = "\
tensor([[0.2151, 0.9466, 0.1289, 0.5808, 0.9035, 0.8554, 0.9968, 0.4093],
        [0.3238, 0.3659, 0.6303, 0.3005, 0.9155, 0.2884, 0.5053, 0.3331]],
       dtype=torch.float64)";
    let got = format_tensor(Values::F64(&rows), &[2, 8], &Suffixes::default());
    assert_eq!(got, expected);
}

#[test]
fn grad_fn_hides_requires_grad() {
    assert_eq!(
        with_grad(&[2.0], &[], Some("SumBackward0")),
        "tensor(2., grad_fn=<SumBackward0>)"
    );
    assert_eq!(
        with_grad(&[2.0], &[], None),
        "tensor(2., requires_grad=True)"
    );
}

#[test]
fn empty_tensors() {
    let none = Suffixes::default();
    assert_eq!(f32s(&[], &[0]), "tensor([])");
    assert_eq!(f32s(&[], &[0, 3]), "tensor([], size=(0, 3))");
    assert_eq!(
        format_tensor(Values::I64(&[]), &[0], &none),
        "tensor([], dtype=torch.int64)"
    );
    assert_eq!(
        format_tensor(Values::Bool(&[]), &[2, 0], &none),
        "tensor([], size=(2, 0), dtype=torch.bool)"
    );
    assert_eq!(f32s(&[], &[1, 0, 1, 2]), "tensor([], size=(1, 0, 1, 2))");
    assert_eq!(with_grad(&[], &[0], None), "tensor([], requires_grad=True)");
}

#[test]
fn unit_dimensions() {
    assert_eq!(f32s(&[1.5], &[1, 1, 1, 1]), "tensor([[[[1.5000]]]])");
    assert_eq!(
        f32s(&[1.0, 2.0, 3.0], &[3, 1]),
        "tensor([[1.],\n        [2.],\n        [3.]])"
    );
    assert_eq!(f32s(&[1.0, 2.0, 3.0], &[1, 3]), "tensor([[1., 2., 3.]])");
}

#[test]
#[should_panic(expected = "3 values given for shape [2, 2], which holds 4")]
fn length_mismatch_is_a_clear_panic() {
    f32s(&[1.0, 2.0, 3.0], &[2, 2]);
}

#[test]
fn torch_size() {
    assert_eq!(Size(vec![6, 2]).to_string(), "torch.Size([6, 2])");
    assert_eq!(Size(vec![5]).to_string(), "torch.Size([5])");
    assert_eq!(Size(vec![]).to_string(), "torch.Size([])");
    let size = Size::from(&[6_usize, 2][..]);
    assert_eq!(size, [6, 2]);
    assert_eq!(size, vec![6, 2]);
    assert_eq!(size, &[6_usize, 2][..]);
    assert_eq!(size, *[6_usize, 2].as_slice());
    assert_eq!((size[0], size.len()), (6, 2));
    assert_eq!(Size::from(vec![3]), Size(vec![3]));
}
