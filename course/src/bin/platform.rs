//! Prints whether this run computes as the reference platform, on the device `SHARED_DEVICE`
//! names (see `course::platform`): the first line of the libtorch suite.
//!
//! ```sh
//! SHARED_DEVICE=torch-cpu cargo run -q -p course --features shared/tch --bin platform
//! ```

fn main() {
    println!("{}: {}", shared::device(), course::platform::platform());
}
