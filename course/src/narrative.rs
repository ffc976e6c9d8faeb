//! A chapter's printed story: a title, then steps, each a heading and the lines it prints.
//!
//! Chapters build a [`Narrative`] instead of printing directly, so the same text goes to
//! the terminal (`cargo run -p ch05-causal`), to the snapshot tests (one snapshot for the
//! whole text and one per step) and into the book. The text layout is the one the PyTorch
//! reference scripts print:
//!
//! ```text
//! # Chapter 5: Causal attention
//!
//! ## A simple mask with tril
//! tensor([[1., 0.],
//!         [1., 1.]])
//!
//! ```
//!
//! A chapter's narrative takes a [`Seed`]: the seed given on the command line
//! (`cargo run -p ch05-causal -- --seed 7`), which then replaces every seed the articles
//! pass to `manual_seed`, or none, and the articles' own seeds are used.

use std::fmt::{self, Display};

use shared::viz::{self, Heatmap};
use shared::{Element, Tensor};

/// The seed a chapter runs with: one given on the command line, or the articles' own.
///
/// Written where the article calls `torch.manual_seed(789)`, `manual_seed(seed.or(789))`
/// reads as "the given seed, or else the article's 789", so one listing prints the
/// article's numbers by default and any seed's numbers on request.
///
/// ```
/// use course::narrative::Seed;
/// assert_eq!(Seed::ARTICLES.or(789), 789);
/// assert_eq!(Seed::given(7).or(789), 7);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seed(Option<u64>);

impl Seed {
    /// No seed given: every `manual_seed` call uses the article's value.
    pub const ARTICLES: Seed = Seed(None);

    /// One seed for every `manual_seed` call of the chapter.
    pub fn given(seed: u64) -> Seed {
        Seed(Some(seed))
    }

    /// The seed to pass to `manual_seed` where the article passes `article`.
    pub fn or(self, article: u64) -> u64 {
        self.0.unwrap_or(article)
    }
}

impl From<Option<u64>> for Seed {
    fn from(seed: Option<u64>) -> Seed {
        Seed(seed)
    }
}

/// One step: a heading, the lines printed under it, and the attention matrices it shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The heading, without the leading `## `.
    pub title: String,
    /// Everything printed under the heading, one entry per `print` (may span lines).
    pub lines: Vec<String>,
    /// The step's matrices of weights as heatmaps, printed after its lines only on request
    /// (`--heatmaps`): the chapter's text stays the text the PyTorch scripts print.
    pub heatmaps: Vec<Heatmap>,
}

impl Step {
    /// Prints one value, like Python's `print(value)`; a tensor prints as PyTorch prints it.
    pub fn print(&mut self, value: impl Display) -> &mut Self {
        self.lines.push(value.to_string());
        self
    }

    /// Prints `label: torch.Size([..])`, like Python's `print("label:", t.shape)`.
    pub fn print_shape<E: Element>(
        &mut self,
        label: &str,
        t: &Tensor<E>,
    ) -> &mut Self {
        self.print(format!("{label}: {}", t.shape()))
    }

    /// Records `weights` as a heatmap titled `title`, rows labelled by `rows` (the queries)
    /// and columns by `cols` (the keys). It prints nothing in the chapter's text; the
    /// command line's `--heatmaps` shows it after the step's lines.
    ///
    /// The weights of one query (1-D) are one row. Weights with leading dims (a batch,
    /// heads) give one heatmap per leading index, titled with it: `title [1, 0]` is batch
    /// 1, head 0 of `[batch, heads, queries, keys]`.
    ///
    /// # Shapes
    /// `weights`: `[cols.len()]` (with one row label) or `[..., rows.len(), cols.len()]`;
    /// a scalar or other label counts is an error naming the shapes.
    pub fn heatmap<R: AsRef<str>, C: AsRef<str>>(
        &mut self,
        title: &str,
        weights: &Tensor,
        rows: &[R],
        cols: &[C],
    ) -> shared::Result<&mut Self> {
        let dims = weights.sizes();
        if dims.len() == 1 {
            let row = weights.f_reshape([1, dims[0]])?;
            self.heatmaps
                .push(viz::heatmap(&row, rows, cols)?.title(title));
            return Ok(self);
        }
        if dims.len() == 2 || dims.is_empty() {
            self.heatmaps
                .push(viz::heatmap(weights, rows, cols)?.title(title));
            return Ok(self);
        }
        let (lead, matrix) = dims.split_at(dims.len() - 2);
        let count: usize = lead.iter().product();
        let flat = weights.f_reshape([count, matrix[0], matrix[1]])?;
        for k in 0..count {
            // The leading index of matrix k, last dim fastest.
            let mut index = Vec::with_capacity(lead.len());
            let mut rest = k;
            for &n in lead.iter().rev() {
                index.push(rest % n);
                rest /= n;
            }
            index.reverse();
            let index: Vec<String> = index.iter().map(|i| i.to_string()).collect();
            let map = viz::heatmap(&flat.f_select(0, k as i64)?, rows, cols)?;
            self.heatmaps
                .push(map.title(format!("{title} [{}]", index.join(", "))));
        }
        Ok(self)
    }

    /// [`Step::heatmap`] with rows and columns labelled by their indices `0, 1, 2, ...`,
    /// for weights without words.
    ///
    /// # Shapes
    /// `weights`: `[..., queries, keys]`.
    pub fn heatmap_indexed(
        &mut self,
        title: &str,
        weights: &Tensor,
    ) -> shared::Result<&mut Self> {
        let indices = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
        let dims = weights.sizes();
        let (rows, cols) = match dims.len() {
            0 => (Vec::new(), Vec::new()),
            1 => (indices(1), indices(dims[0])),
            n => (indices(dims[n - 2]), indices(dims[n - 1])),
        };
        self.heatmap(title, weights, &rows, &cols)
    }

    /// The lines of this step as one text (each line ends with a newline).
    pub fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// A file-name friendly version of the title, for naming the step's snapshot:
    /// lower case ASCII letters and digits, other runs of characters become `_`.
    pub fn slug(&self) -> String {
        let mut slug = String::new();
        for c in self.title.chars() {
            if c.is_ascii_alphanumeric() {
                slug.push(c.to_ascii_lowercase());
            } else if !slug.ends_with('_') {
                slug.push('_');
            }
        }
        slug.trim_matches('_').to_string()
    }
}

/// A chapter's whole printed output.
#[derive(Clone, Debug, PartialEq)]
pub struct Narrative {
    /// The chapter title, without the leading `# `.
    pub title: String,
    /// The steps, in the order they print.
    pub steps: Vec<Step>,
}

impl Narrative {
    /// A narrative with a title and no steps yet.
    pub fn new(title: impl Into<String>) -> Narrative {
        Narrative {
            title: title.into(),
            steps: Vec::new(),
        }
    }

    /// Starts a new step under a `## title` heading and returns it to print into.
    pub fn step(&mut self, title: impl Into<String>) -> &mut Step {
        self.steps.push(Step {
            title: title.into(),
            lines: Vec::new(),
            heatmaps: Vec::new(),
        });
        self.steps.last_mut().expect("just pushed")
    }

    /// The text with each step's heatmaps after its lines, each after an empty line;
    /// `colour` paints the cells for a terminal. Without heatmaps, the same as the
    /// narrative's [`Display`] text.
    pub fn text_with_heatmaps(&self, colour: bool) -> String {
        let mut text = format!("# {}\n\n", self.title);
        for step in &self.steps {
            text.push_str(&format!("## {}\n{}", step.title, step.text()));
            for map in &step.heatmaps {
                text.push_str(&format!("\n{}", map.clone().colour(colour)));
            }
            text.push('\n');
        }
        text
    }
}

/// The text as the chapter binary prints it.
impl Display for Narrative {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "# {}", self.title)?;
        writeln!(f)?;
        for step in &self.steps {
            writeln!(f, "## {}", step.title)?;
            f.write_str(&step.text())?;
            writeln!(f)?;
        }
        Ok(())
    }
}

/// The values of a 1-D tensor with two decimals, comma separated, as a script's
/// `", ".join(f"{s:.2f}" for s in t)` (used for sums that are 1 up to rounding).
///
/// ```
/// use course::narrative::two_decimals;
/// assert_eq!(two_decimals(&shared::tensor!([1.0, 0.999])), "1.00, 1.00");
/// ```
///
/// # Shapes
/// `t`: `[n]`.
pub fn two_decimals(t: &Tensor) -> String {
    let values: Vec<String> = t.to_vec().iter().map(|s| format!("{s:.2}")).collect();
    values.join(", ")
}

/// How Python prints a `bool`: `True` or `False`.
pub fn python_bool(value: bool) -> &'static str {
    if value { "True" } else { "False" }
}

/// How Python prints a dict with string keys: `{'Life': 0, 'is': 1}`, in the order given.
/// A key with a `'` in it is quoted with `"`, as Python's `repr` does.
pub fn python_dict<K: AsRef<str>, V: Display>(
    entries: impl IntoIterator<Item = (K, V)>,
) -> String {
    let entries: Vec<String> = entries
        .into_iter()
        .map(|(key, value)| {
            let key = key.as_ref();
            let quote = if key.contains('\'') && !key.contains('"') {
                '"'
            } else {
                '\''
            };
            format!("{quote}{key}{quote}: {value}")
        })
        .collect();
    format!("{{{}}}", entries.join(", "))
}

/// The text printed under the heading `## title` in a chapter's output (for example the
/// PyTorch reference in `reference/expected/`), without the heading and the empty line that
/// ends the step; `None` if no step has that title.
pub fn step_text<'a>(output: &'a str, title: &str) -> Option<&'a str> {
    let heading = format!("## {title}\n");
    let start = output.find(&heading)? + heading.len();
    let rest = &output[start..];
    // A step ends with the empty line before the next heading (a 3-D tensor prints empty
    // lines of its own), or at the end of the output.
    let len = rest.find("\n\n## ").unwrap_or(rest.trim_end().len());
    Some(&rest[..len])
}

/// The `count` lines printed after the line `header` in `step` (a step's text, from
/// [`step_text`]), for a test that compares one printed tensor with PyTorch's; `None` if no
/// line is `header` or fewer lines follow it.
///
/// ```
/// use course::narrative::lines_after;
/// let step = "q:\ntensor([[1., 2.],\n        [3., 4.]])\nk:\ntensor([5.])";
/// assert_eq!(lines_after(step, "q:", 2), Some("tensor([[1., 2.],\n        [3., 4.]])"));
/// assert_eq!(lines_after(step, "k:", 2), None);
/// ```
pub fn lines_after<'a>(step: &'a str, header: &str, count: usize) -> Option<&'a str> {
    let mut offset = 0;
    let mut lines = step.split_inclusive('\n');
    for line in lines.by_ref() {
        offset += line.len();
        if line.trim_end_matches('\n') == header {
            break;
        }
    }
    let start = offset;
    let mut taken = 0;
    for line in lines.take(count) {
        offset += line.len();
        taken += 1;
    }
    (taken == count && start < step.len())
        .then(|| step[start..offset].trim_end_matches('\n'))
}

/// The folder of PyTorch's outputs for the seeds each chapter's manifest lists
/// (`seeds` in `chapters/chNN-slug/chapter.toml`): `chNN-slug.seed-S.txt`, written by
/// `reference/regenerate.sh`.
pub const SEEDS_FOLDER: &str = "reference/expected/seeds";

/// PyTorch's output of `chapter` for each seed its manifest ([`crate::manifest`]) lists,
/// as `(seed, text)`, read from [`SEEDS_FOLDER`]`/chapter.seed-S.txt` under the workspace
/// root `root`. For the tests: panics with what is missing and how to make it.
pub fn seed_references(root: &std::path::Path, chapter: &str) -> Vec<(u64, String)> {
    let manifest =
        crate::manifest::Manifest::read(&root.join("chapters").join(chapter))
            .unwrap_or_else(|e| panic!("{e}"));
    let folder = root.join(SEEDS_FOLDER);
    manifest
        .seeds
        .into_iter()
        .map(|seed| {
            let path = folder.join(format!("{chapter}.seed-{seed}.txt"));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "cannot read {}: {e} (reference/regenerate.sh writes it)",
                    path.display()
                )
            });
            (seed, text)
        })
        .collect()
}

/// The `runs_if` of [`crate::chapter_output_tests!`] for a chapter that needs nothing
/// outside the workspace: its tests always run.
pub fn always_runs() -> bool {
    true
}

/// The output tests of a chapter, for its `tests/output.rs`:
/// `output_equals_pytorch` (the whole output with the articles' seeds equals the PyTorch
/// reference text), `output_equals_pytorch_for_other_seeds` (the same for every seed the
/// chapter's manifest lists, against PyTorch's output for that seed) and
/// `output_snapshots` (an insta snapshot of every step, the answer key the book includes;
/// the whole output is their concatenation, which `output_equals_pytorch` checks). The texts are compared byte for byte on the reference platform and
/// within their printed digits elsewhere ([`crate::platform::assert_printed`]); the
/// snapshots, which hold the reference platform's text, only on the reference platform. The
/// chapter's tests need `insta` as a dev-dependency; the package's name is its folder's name
/// under `chapters/`.
///
/// ```ignore
/// course::chapter_output_tests!(
///     ch05_causal::narrative::narrative,
///     include_str!("../../../reference/expected/ch05-causal.txt")
/// );
/// ```
///
/// A chapter that reads a file the workspace does not hold (a text it downloads) names a
/// function that says whether to run: `runs_if = data_is_here`, a `fn() -> bool` that
/// prints why it skips, or fails when CI requires the file. Each test returns at once when
/// it says no.
#[macro_export]
macro_rules! chapter_output_tests {
    ($narrative:path, $pytorch:expr) => {
        $crate::chapter_output_tests!(
            $narrative,
            $pytorch,
            runs_if = $crate::narrative::always_runs
        );
    };
    ($narrative:path, $pytorch:expr, runs_if = $runs:expr) => {
        #[test]
        fn output_equals_pytorch() {
            if !($runs)() {
                return;
            }
            let story = $narrative($crate::narrative::Seed::ARTICLES)
                .expect("the chapter runs");
            $crate::platform::assert_printed(
                &story.to_string(),
                $pytorch,
                env!("CARGO_PKG_NAME"),
            );
        }

        #[test]
        fn output_equals_pytorch_for_other_seeds() {
            // The chapter crates live two folders below the workspace root.
            let root =
                ::std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            let chapter = env!("CARGO_PKG_NAME");
            if !($runs)() {
                return;
            }
            for (seed, pytorch) in $crate::narrative::seed_references(&root, chapter)
            {
                let story = $narrative($crate::narrative::Seed::given(seed))
                    .expect("the chapter runs");
                let what = format!("{chapter} --seed {seed}");
                $crate::platform::assert_printed(&story.to_string(), &pytorch, &what);
            }
        }

        #[test]
        fn output_snapshots() {
            if !($runs)() {
                return;
            }
            let platform = $crate::platform::platform();
            if !platform.is_reference() {
                // The snapshots are the reference platform's text, the book's answer key;
                // here output_equals_pytorch compares the same text within its digits.
                eprintln!("skipped: {platform}");
                return;
            }
            let story = $narrative($crate::narrative::Seed::ARTICLES)
                .expect("the chapter runs");
            for step in &story.steps {
                ::insta::assert_snapshot!(step.slug(), step.text(), &step.title);
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_reference_scripts() {
        let mut story = Narrative::new("Chapter 0: Demo");
        story
            .step("Two lines")
            .print("a")
            .print(format!("b: {}", 1));
        story.step("Empty");
        assert_eq!(
            story.to_string(),
            "# Chapter 0: Demo\n\n## Two lines\na\nb: 1\n\n## Empty\n\n"
        );
        assert_eq!(story.steps[0].slug(), "two_lines");
        let text = story.to_string();
        assert_eq!(step_text(&text, "Two lines"), Some("a\nb: 1"));
        assert_eq!(step_text(&text, "Missing"), None);
    }

    #[test]
    fn heatmaps_print_only_on_request() {
        let mut story = Narrative::new("Chapter 0: Demo");
        let weights = shared::tensor!([[1.0, 0.0], [0.5, 0.5]]);
        story
            .step("Weights")
            .print("w")
            .heatmap("causal", &weights, &["a", "b"], &["a", "b"])
            .unwrap();
        story.step("Next").print("x");
        let plain = "# Chapter 0: Demo\n\n## Weights\nw\n\n## Next\nx\n\n";
        assert_eq!(
            story.to_string(),
            plain,
            "the chapter's text does not change"
        );
        assert_eq!(
            story.text_with_heatmaps(false),
            "# Chapter 0: Demo\n\n## Weights\nw\n\ncausal\n    a      b\n\
             a ██1.00      0\nb ▒▒0.50 ▒▒0.50\n(blank = 0, ██ = 1.00)\n\n## Next\nx\n\n"
        );
        assert!(story.text_with_heatmaps(true).contains("\x1b[48;2;"));
        let mut bare = Narrative::new("Chapter 0: Demo");
        bare.step("Weights").print("w");
        assert_eq!(bare.text_with_heatmaps(true), bare.to_string());
        let error = story
            .step("Bad")
            .heatmap("scalar", &shared::Tensor::scalar(0.5), &["a"], &["b"])
            .unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with("heatmap: expected a 2-D tensor"),
            "{message}"
        );
        let heads = shared::stack(&[&weights, &weights.t(), &weights], 0)
            .reshape(&[3, 1, 2, 2]);
        let step = story.step("Heads");
        step.heatmap_indexed("w", &heads).unwrap();
        let titles: Vec<&str> =
            step.heatmaps.iter().map(|m| m.title.as_str()).collect();
        assert_eq!(titles, ["w [0, 0]", "w [1, 0]", "w [2, 0]"]);
        assert_eq!(step.heatmaps[1].values, [1.0, 0.5, 0.0, 0.5]);
        assert_eq!(step.heatmaps[0].rows, ["0", "1"]);
        let step = story.step("One query");
        step.heatmap("x(2)", &shared::tensor!([0.25, 0.75]), &["b"], &["a", "b"])
            .unwrap();
        assert_eq!(
            step.heatmaps[0].to_string().lines().nth(2),
            Some("b ░░0.25 ▓▓0.75")
        );
    }

    #[test]
    fn python_texts() {
        let mut step = Step {
            title: "Shapes".into(),
            lines: Vec::new(),
            heatmaps: Vec::new(),
        };
        step.print_shape("x.shape", &shared::zeros(&[2, 3]));
        assert_eq!(step.text(), "x.shape: torch.Size([2, 3])\n");
        assert_eq!(python_bool(true), "True");
        let vocab = [("Life", 0), ("it's", 1)];
        assert_eq!(python_dict(vocab), "{'Life': 0, \"it's\": 1}");
    }
}
