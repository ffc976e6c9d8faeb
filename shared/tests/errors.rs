//! Every operation that can fail says which operation failed and names the shapes; the
//! plain form panics with the same message as the `f_` form returns.

use shared::nn::{Dropout, Embedding, Linear};
use shared::{Tensor, f_arange, f_cat, f_einsum, f_stack, ones, tensor, zeros};

fn message<T: std::fmt::Debug>(result: shared::Result<T>) -> String {
    result.expect_err("an error").to_string()
}

#[test]
fn shape_errors_name_the_operation_and_the_shapes() {
    let cases: Vec<(String, &str)> = vec![
        (
            message(ones(&[6, 3]).f_matmul(&ones(&[2, 2]))),
            "matmul: mat1 and mat2 shapes cannot be multiplied (6x3 and 2x2)",
        ),
        (
            message(ones(&[6]).f_matmul(&ones(&[5]))),
            "matmul: inconsistent tensor size, expected tensor [6] and src [5] to have the same number of elements, but got 6 and 5 elements respectively",
        ),
        (
            message(ones(&[2, 6, 3]).f_matmul(&ones(&[3, 3, 2]))),
            "matmul: the batch dims [2] and [3] of shapes [2, 6, 3] and [3, 3, 2] cannot be broadcast together: the size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
        ),
        (
            message(ones(&[6, 3]).f_mm(&ones(&[3]))),
            "mm: mat2 must be a matrix, got shapes [6, 3] and [3]",
        ),
        (
            message(ones(&[2, 6, 3]).f_bmm(&ones(&[3, 3, 2]))),
            "bmm: Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3] (shapes [2, 6, 3] and [3, 3, 2])",
        ),
        (
            message(ones(&[2, 3]).f_dot(&ones(&[3]))),
            "dot: 1D tensors expected, but got 2D and 1D tensors (shapes [2, 3] and [3])",
        ),
        (
            message(ones(&[6, 3]).f_view(&[6, 4])),
            "view: shape '[6, 4]' is invalid for input of size 18",
        ),
        (
            message(ones(&[6, 3]).f_view(&[-1, -1])),
            "view: only one dimension can be inferred (shape [-1, -1])",
        ),
        (
            message(ones(&[6, 3]).f_reshape(&[4, -1])),
            "reshape: shape '[4, -1]' is invalid for input of size 18",
        ),
        (
            message(ones(&[6, 3]).f_softmax(2)),
            "softmax: dim 2 is out of range for a tensor of 2 dimensions (expected to be in range of [-2, 1], but got 2)",
        ),
        (
            message(ones(&[6, 3]).f_softmax(-3)),
            "softmax: dim -3 is out of range for a tensor of 2 dimensions (expected to be in range of [-2, 1], but got -3)",
        ),
        (
            message(ones(&[6, 3]).f_transpose(0, 2)),
            "transpose: dim 2 is out of range for a tensor of 2 dimensions (expected to be in range of [-2, 1], but got 2)",
        ),
        (
            message(ones(&[6, 3]).f_select(0, 6)),
            "select: index 6 is out of bounds for dimension 0 with size 6",
        ),
        (
            message(ones(&[6, 3]).f_permute(&[0, 0])),
            "permute: dims [0, 0] are not a permutation of the 2 dims of a tensor of shape [6, 3] (duplicate dims are not allowed)",
        ),
        (
            message(ones(&[2, 3, 4]).f_t()),
            "t: expects a tensor with <= 2 dimensions, but self is 3D (shape [2, 3, 4])",
        ),
        (
            message(ones(&[6, 3]).f_narrow(0, 4, 3)),
            "narrow: start (4) + length (3) exceeds dimension size (6) of dim 0 (shape [6, 3])",
        ),
        (
            message(ones(&[6, 3]).f_add(&ones(&[2]))),
            "add: the size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1 (shapes [6, 3] and [2])",
        ),
        (
            message(ones(&[6, 3]).f_div(&ones(&[6, 2]))),
            "div: the size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1 (shapes [6, 3] and [6, 2])",
        ),
        (
            message(ones(&[6, 3]).f_sum_dim(2, true)),
            "sum: dim 2 is out of range for a tensor of 2 dimensions (expected to be in range of [-2, 1], but got 2)",
        ),
        (
            message(ones(&[6, 3]).f_item()),
            "item: a tensor with 18 elements (shape [6, 3]) cannot be converted to a scalar",
        ),
        (
            message(ones(&[3]).f_masked_fill_(&ones(&[3, 3]).bool(), 0.0)),
            "masked_fill_: output with shape [3] doesn't match the broadcast shape [3, 3] (mask of shape [3, 3])",
        ),
        (
            message(ones(&[3]).f_triu(1)),
            "triu: input tensor must have at least 2 dimensions (shape [3])",
        ),
        (
            message(ones(&[2, 3]).f_repeat(&[2])),
            "repeat: Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor (repeats [2] for shape [2, 3])",
        ),
        (
            message(f_cat(&[ones(&[2, 3]), ones(&[2, 4])], 0)),
            "cat: Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1 in the list (shapes [2, 3] and [2, 4])",
        ),
        (
            message(f_stack(&[ones(&[2, 3]), ones(&[3, 2])], 0)),
            "stack: stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] at entry 1",
        ),
        (
            message(f_einsum("sd,hde->hse", &ones(&[5, 16]), &ones(&[4, 8, 4]))),
            "einsum: subscript d has size 8 for operand 1 which does not broadcast with previously seen size 16 (operand shapes [5, 16], [4, 8, 4])",
        ),
        (
            message(Tensor::f_from_vec(vec![1.0, 2.0, 3.0], &[2, 2])),
            "from_vec: 3 values cannot fill a tensor of shape [2, 2] (4 elements)",
        ),
        (
            message(
                Linear::from_parameters(ones(&[2, 3]), None)
                    .f_forward(&ones(&[6, 2])),
            ),
            "linear: mat1 and mat2 shapes cannot be multiplied (6x2 and 3x2)",
        ),
        (
            message(Linear::f_from_parameters(ones(&[2, 3]), Some(ones(&[3])))),
            "linear: bias of shape [3] does not fit weight of shape [2, 3]",
        ),
        (
            message(
                Embedding {
                    weight: zeros(&[10, 4]),
                }
                .f_forward(&tensor!([2, 10])),
            ),
            "embedding: index 10 is out of bounds for dimension 0 with size 10",
        ),
        (
            message(Dropout::f_new(1.5)),
            "dropout: dropout probability has to be between 0 and 1, but got 1.5",
        ),
        (
            message(f_arange(0.0f32, 1.0, 0.0)),
            "arange: step must be nonzero (got 0)",
        ),
    ];
    for (got, expected) in cases {
        assert_eq!(got, expected);
    }
}

#[test]
#[should_panic(
    expected = "matmul: mat1 and mat2 shapes cannot be multiplied (6x3 and 2x2)"
)]
fn plain_forms_panic_with_the_same_message() {
    let _ = ones(&[6, 3]).matmul(&ones(&[2, 2]));
}

#[test]
#[should_panic(expected = "view: shape '[6, 4]' is invalid for input of size 18")]
fn view_panics_with_the_message() {
    let _ = ones(&[6, 3]).view(&[6, 4]);
}

#[test]
#[should_panic(
    expected = "div: the size of tensor a (6) must match the size of tensor b (5)"
)]
fn operators_panic_with_the_message() {
    let _ = &ones(&[6]) / &ones(&[5]);
}

#[test]
fn edge_errors_say_what_pytorch_says() {
    let big = 1usize << 62;
    let cases: Vec<(String, &str)> = vec![
        (
            message(shared::f_zeros(&[big, 4])),
            "zeros: Storage size calculation overflowed with sizes=[4611686018427387904, 4]",
        ),
        (
            message(Tensor::<f32>::f_from_vec(vec![], &[0, big, big])),
            "from_vec: Storage size calculation overflowed with sizes=[0, 4611686018427387904, 4611686018427387904]",
        ),
        (
            message(ones(&[2, 3]).f_repeat(&[big, big])),
            "repeat: Storage size calculation overflowed with sizes=[9223372036854775808, 13835058055282163712]",
        ),
        (
            message(f_arange(0, 5, -1)),
            "arange: upper bound and lower bound inconsistent with step sign (start 0, end 5, step -1)",
        ),
        (
            message(f_arange(0.0, f64::INFINITY, 1.0)),
            "arange: unsupported range: 0 -> inf",
        ),
        (
            message(f_arange(0.0, 1e30, 1.0)),
            "arange: invalid size, possible overflow? (0 to 1000000000000000000000000000000 by 1)",
        ),
        (
            message(Tensor::scalar(1.0f32).f_size(0)),
            "size: Dimension specified as 0 but tensor has no dimensions (shape [])",
        ),
        (
            message(Tensor::scalar(1.0f32).f_transpose(0, 1)),
            "transpose: dim 1 is out of range for a tensor of 0 dimensions (expected to be in range of [-1, 0], but got 1)",
        ),
        (
            message(ones(&[3]).f_softmax(1)),
            "softmax: dim 1 is out of range for a tensor of 1 dimension (expected to be in range of [-1, 0], but got 1)",
        ),
        (
            message(ones(&[3, 3]).f_unsqueeze(3)),
            "unsqueeze: dim 3 is out of range for a tensor of 2 dimensions (shape [3, 3]; expected to be in range of [-3, 2], but got 3)",
        ),
        (
            message(Tensor::scalar(1.0f32).f_narrow(0, 0, 1)),
            "narrow: narrow() cannot be applied to a 0-dim tensor (shape [])",
        ),
        (
            message(ones(&[6]).f_narrow(0, -7, 1)),
            "narrow: start out of range (expected to be in range of [-6, 6], but got -7) for dim 0 of shape [6]",
        ),
        (
            message(f_cat(&[Tensor::scalar(1.0f32), Tensor::scalar(2.0)], 0)),
            "cat: zero-dimensional tensor (at position 0) cannot be concatenated",
        ),
        (
            message(ones(&[2, 3]).t().f_view(&[6])),
            "view: view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces): shape [3, 2] with strides [1, 3] cannot be viewed as [6]. Use .reshape(...) instead.",
        ),
        (
            message(zeros(&[0, 3]).f_view(&[-1, 0])),
            "view: cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and is ambiguous",
        ),
        (
            message(ones(&[2, 3, 2]).f_matmul(&ones(&[3, 2]))),
            "matmul: mat1 and mat2 shapes cannot be multiplied (6x2 and 3x2)",
        ),
    ];
    for (got, expected) in cases {
        assert_eq!(got, expected);
    }
}

#[test]
fn empty_and_0d_tensors_give_pytorchs_answers() {
    let s = Tensor::scalar(2.5f32);
    assert_eq!(s.transpose(0, -1).shape(), [0usize; 0]);
    assert_eq!(s.squeeze_dim(-1).shape(), [0usize; 0]);
    assert_eq!(s.unsqueeze(-1).shape(), [1]);
    assert_eq!(f_stack(&[&s, &s], -1).unwrap().to_vec(), vec![2.5, 2.5]);
    // An inner dim of 0: every product is an empty sum, +0.
    let c = zeros(&[2, 0]).matmul(&zeros(&[0, 3]));
    assert_eq!(c.shape(), [2, 3]);
    assert!(c.to_vec().iter().all(|x| x.to_bits() == 0));
    // Out of place, masked_fill broadcasts the tensor to the mask's shape.
    let filled = ones(&[3])
        .masked_fill(&tensor!([[true, false, true], [false, false, false]]), 0.0);
    assert_eq!(filled.to_vec(), vec![0.0, 1.0, 0.0, 1.0, 1.0, 1.0]);
    // arange counts in f64 as PyTorch does: the tenth value is 0.9 rounded once to f32, not
    // nine additions of 0.1f32.
    let tenths = shared::arange(0.0, 1.0, 0.1).to_vec();
    assert_eq!(tenths.len(), 10);
    assert_eq!(tenths[9], 0.9f32);
}
