//! `cargo run -p ch21-webgpu`: runs the chapter's kernels on the GPU wgpu finds and
//! prints the steps as the PyTorch reference script prints them; the adapter goes to
//! stderr. `-- --list-adapters` lists every adapter, `-- --cpu-adapter` asks for a
//! software one, `-- --add-arrays` runs the first GPU program (adding two arrays)
//! instead.

fn main() -> std::process::ExitCode {
    // SAFETY: the first thing `main` does, before any thread has started.
    let _runtime_dir = unsafe { ch21_webgpu::device::private_runtime_dir_if_unset() };
    course::cli::chapter_main_with(ch21_webgpu::narrative::run)
}
