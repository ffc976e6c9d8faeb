//! The command line every chapter binary shares:
//!
//! ```text
//! cargo run -p ch05-causal                          # print the chapter's steps
//! cargo run -p ch05-causal -- --seed 7              # the same with manual_seed(7) throughout
//! cargo run -p ch05-causal -- --heatmaps            # with the attention weights as heatmaps
//! cargo run -p ch05-causal --features tch -- --device torch-cpu   # on libtorch's CPU
//! cargo run -p ch05-causal --features tch -- --device cuda        # on a GPU
//! cargo run -p ch05-causal --features tch -- doctor  # is libtorch usable? what to fix
//! ```
//!
//! A chapter that needs options of its own (chapter 11's `--steps N`) describes them in a
//! `clap::Args` struct and calls [`chapter_main_with`]; the others call [`chapter_main`].
//!
//! The exercises have one front door, `cargo run -p learn` (see [`crate::hints`]).

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use shared::backend::Device;

use crate::narrative::{Narrative, Seed};

#[derive(Parser)]
#[command(
    about = "Prints this chapter's steps exactly as its PyTorch reference script prints them"
)]
struct Args<Options: clap::Args> {
    /// Where to compute: cpu (ours), torch-cpu, cuda or cuda:N (libtorch; needs --features tch).
    /// Defaults to $SHARED_DEVICE, else cpu.
    #[arg(long, global = true)]
    device: Option<String>,
    /// Seeds every manual_seed call of the chapter with S instead of the seeds its PyTorch
    /// reference script uses (0 to 18446744073709551615, as torch.manual_seed accepts).
    #[arg(long, global = true, value_name = "S")]
    seed: Option<u64>,
    /// Also draws the attention weights of each step as heatmaps, after the step's text
    /// (in colour on a terminal, unless NO_COLOR is set).
    #[arg(long, global = true)]
    heatmaps: bool,
    /// The chapter's own options (none for most chapters).
    #[command(flatten)]
    options: Options,
    #[command(subcommand)]
    command: Option<Command>,
}

/// The options of a chapter that has none of its own.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct NoOptions {}

#[derive(Subcommand)]
enum Command {
    /// Reports whether libtorch can be used (version, CUDA, GPUs, environment) and how to fix
    /// what is missing.
    Doctor,
}

/// Whether to colour the heatmaps: only on a terminal, and not when the environment sets
/// `NO_COLOR` (to anything but the empty string, as <https://no-color.org> asks).
fn colour_wanted() -> bool {
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    std::io::stdout().is_terminal() && !no_colour
}

/// The `main` of a chapter binary: prints the narrative, run with the seed given by
/// `--seed` (or the articles' seeds), or serves `doctor`.
pub fn chapter_main(
    narrative: impl FnOnce(Seed) -> shared::Result<Narrative>,
) -> ExitCode {
    chapter_main_with(|seed, _: NoOptions| narrative(seed))
}

/// [`chapter_main`] for a chapter with options of its own: `Options` adds its flags to the
/// command line (and to `--help`), and the narrative receives their values with the seed.
pub fn chapter_main_with<Options: clap::Args>(
    narrative: impl FnOnce(Seed, Options) -> shared::Result<Narrative>,
) -> ExitCode {
    let args = Args::<Options>::parse();
    if let Some(Command::Doctor) = args.command {
        println!("{}", crate::doctor::report());
        return ExitCode::SUCCESS;
    }
    if let Some(name) = &args.device {
        let device = name
            .parse::<Device>()
            .and_then(shared::backend::f_set_device);
        if let Err(error) = device {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    }
    match narrative(Seed::from(args.seed), args.options) {
        Ok(story) if args.heatmaps => {
            print!("{}", story.text_with_heatmaps(colour_wanted()));
            ExitCode::SUCCESS
        }
        Ok(story) => {
            print!("{story}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
