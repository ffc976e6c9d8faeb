//! `cargo run -p ch20-real-model`: the chapter's narrative on the real model;
//! `-- --interventions`: heads ablated and a window without its sink;
//! `-- --prompt TEXT`, `-- --chat TEXT`, `-- --tokenize TEXT`: the model at work
//! (`-- --help` lists every option).

use std::process::ExitCode;

use ch20_real_model::cli::{Options, WeightsIn, run};

fn main() -> ExitCode {
    // On a thread of the rayon pool, so that the tensor operations share their work with
    // the pool's threads without waking one from outside for every operation (the course's
    // `process` module says more).
    course::process::on_pool_thread(main_on_the_pool)
}

fn main_on_the_pool() -> ExitCode {
    course::cli::chapter_main_with(|seed, options: Options| {
        if options.interventions {
            return ch20_real_model::narrative::interventions_with(seed, &options);
        }
        if options.weights != WeightsIn::Float32 && !options.is_command() {
            eprintln!("error: --weights quantised is for --prompt and --chat");
            std::process::exit(2);
        }
        if !options.is_command() {
            return ch20_real_model::narrative::narrative_with(seed, &options);
        }
        // The answer was streamed as it came: there is no narrative to print after it.
        let code = match run(seed, &options) {
            Ok(()) => 0,
            Err(error) => {
                eprintln!("error: {error}");
                1
            }
        };
        std::process::exit(code)
    })
}
