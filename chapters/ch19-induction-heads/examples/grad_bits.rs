//! Debug: gradients and parameters after each of the first steps, as hex bits.
use ch19_induction_heads::data::Repeats;
use ch19_induction_heads::model::AttentionOnly;
use ch19_induction_heads::train::{BATCH, Gradients, loss_and_gradients, optimizer};

fn main() {
    shared::manual_seed(7);
    let mut model = AttentionOnly::new();
    let _ = Repeats::Variable.draw(256);
    let _ = Repeats::Variable.draw(1);
    let mut opt = optimizer();
    let hex = |t: &shared::Tensor| {
        t.to_vec().iter().map(|x| format!("{:08x}", x.to_bits())).collect::<Vec<_>>().join(" ")
    };
    for step in 1..=6 {
        let batch = Repeats::Variable.draw(BATCH);
        let (_, Gradients(grads)) = loss_and_gradients(&model, &batch.ids);
        let names: Vec<String> = model.named_parameters().into_iter().map(|(n, _)| n).collect();
        for (name, g) in names.iter().zip(&grads) {
            println!("{step} grad {name} {}", hex(g));
        }
        let refs: Vec<&shared::Tensor> = grads.iter().collect();
        opt.step(&mut model.parameters_mut(), &refs);
        for (name, p) in model.named_parameters() {
            println!("{step} param {name} {}", hex(p));
        }
    }
}
