//! TEMPORARY STUB (replaced by the rng branch).
pub struct Generator {}
impl Generator {
    pub fn new(_seed: u64) -> Self {
        todo!()
    }
    pub fn manual_seed(&mut self, _seed: u64) {
        todo!()
    }
    pub fn random(&mut self) -> u32 {
        todo!()
    }
    pub fn fill_uniform(&mut self, _out: &mut [f32], _from: f64, _to: f64) {
        todo!()
    }
    pub fn fill_normal(&mut self, _out: &mut [f32], _mean: f64, _std: f64, _contiguous: bool) {
        todo!()
    }
    pub fn fill_bernoulli(&mut self, _out: &mut [f32], _p_keep: f64) {
        todo!()
    }
}
pub fn dropout_in_place(_gen: &mut Generator, _values: &mut [f32], _p: f64) {
    todo!()
}
pub fn linear_weight_bound(_in_features: usize) -> f64 {
    todo!()
}
pub fn linear_bias_bound(_in_features: usize) -> f64 {
    todo!()
}
pub fn with_default_generator<R>(_f: impl FnOnce(&mut Generator) -> R) -> R {
    todo!()
}
pub fn manual_seed(_seed: u64) {
    todo!()
}
