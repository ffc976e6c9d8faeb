//! `cargo run -p ch10-backward`: prints the loss and the gradients of the chapter's
//! attention modules, as PyTorch's autograd prints them.

fn main() -> std::process::ExitCode {
    course::cli::chapter_main(ch10_backward::narrative::narrative)
}
