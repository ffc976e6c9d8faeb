//! The task: sums of two numbers below 100, asked as a question and answered in one fixed
//! form, "17 + 25 = 42.". The held-out sums are drawn first, and training uses every other
//! one, so no held-out sum is ever seen in training.

use shared::{Result, randint};

use crate::setup::OPERANDS;

/// One question: `a + b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sum {
    /// The first operand.
    pub a: u32,
    /// The second operand.
    pub b: u32,
}

impl Sum {
    /// The sum numbered `code` (`a · 100 + b`).
    pub fn from_code(code: u32) -> Sum {
        Sum {
            a: code / OPERANDS,
            b: code % OPERANDS,
        }
    }

    /// Its number among all `OPERANDS²` sums.
    pub fn code(&self) -> u32 {
        self.a * OPERANDS + self.b
    }

    /// The question the user asks.
    // ANCHOR: text
    pub fn question(&self) -> String {
        format!("What is {} + {}?", self.a, self.b)
    }

    /// The one form of the answer the model learns.
    pub fn answer(&self) -> String {
        format!("{} + {} = {}.", self.a, self.b, self.a + self.b)
    }
    // ANCHOR_END: text
}

/// The sums to train on and the sums held out.
#[derive(Clone, Debug)]
pub struct Sums {
    /// Every sum that is not held out, in order of their numbers.
    pub train: Vec<Sum>,
    /// The held-out sums, in the order they were drawn.
    pub held_out: Vec<Sum>,
}

/// Draws `held_out` distinct sums from the default generator (rounds of `held_out` numbers
/// from `randint(0, OPERANDS²)`, each new one kept, until there are enough), and keeps all
/// the others for training.
///
/// # Shapes
/// Returns `held_out` sums and `OPERANDS² − held_out` sums.
// ANCHOR: split
pub fn split(held_out: usize) -> Result<Sums> {
    let all = (OPERANDS * OPERANDS) as usize;
    if held_out == 0 || held_out >= all {
        return Err(shared::Error::InvalidArgument {
            op: "split",
            detail: format!(
                "{held_out} held-out sums: choose between 1 and {}",
                all - 1
            ),
        });
    }
    let mut taken = vec![false; all];
    let mut chosen = Vec::with_capacity(held_out);
    while chosen.len() < held_out {
        for code in randint(0, all, &[held_out]).to_vec() {
            if chosen.len() < held_out && !taken[code as usize] {
                taken[code as usize] = true;
                chosen.push(Sum::from_code(code as u32));
            }
        }
    }
    let train = (0..all as u32)
        .filter(|&c| !taken[c as usize])
        .map(Sum::from_code)
        .collect();
    Ok(Sums {
        train,
        held_out: chosen,
    })
}
// ANCHOR_END: split

/// `batch` training sums drawn with replacement: `randint(0, len, [batch])` from the default
/// generator.
///
/// # Shapes
/// Returns `batch` sums.
pub fn draw_batch(train: &[Sum], batch: usize) -> Vec<Sum> {
    randint(0, train.len(), &[batch])
        .to_vec()
        .into_iter()
        .map(|i| train[i as usize])
        .collect()
}
