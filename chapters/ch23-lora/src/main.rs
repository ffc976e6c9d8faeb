//! `cargo run -p ch23-lora`: the task, the adapters and a short fine-tuning run on chapter
//! 20's tiny checkpoint, its losses PyTorch + PEFT's, then SmolLM2's answers to a few
//! held-out sums before and after the chapter's trained adapter. `--train`, `--eval`,
//! `--prompt`, `--chat` and `--merge-to` (with `--adapter DIR`) work on SmolLM2
//! (`bash scripts/get-model.sh`; `-- --help` lists every option).

fn main() -> std::process::ExitCode {
    use course::process;
    process::on_pool_thread(|| course::cli::chapter_main_with(ch23_lora::cli::main))
}
