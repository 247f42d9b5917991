//! The progress bar of the long runs, on stderr. indicatif hides it by itself when
//! stderr is not a terminal (`ProgressDrawTarget::stderr`), so output redirected to
//! a file or a CI log carries no progress lines.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `len` steps counted in `unit` ("queries", "rounds"); the phase goes in
/// its message. At most 100 columns wide.
pub fn bar(len: usize, unit: &str) -> ProgressBar {
    let template = format!(
        "{{msg:14!}} [{{bar:30}}] {{pos}}/{{len}} {unit}, {{elapsed_precise}} elapsed, eta {{eta}}"
    );
    let style = ProgressStyle::with_template(&template)
        .expect("a valid progress template")
        .progress_chars("=> ");
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    bar.set_style(style);
    bar
}
