//! `flashlab fit`: a profile's fitted parameters searched, within their
//! physical bounds, for the values that best reproduce chosen figures;
//! the table, the values, leave-one-out predictions, and the fitted
//! profile written out.

use crate::out;
use anyhow::{bail, Context, Result};
use card::{FitParam, Profile, Published};
use lab::procedures::fit::{fit, log_error, FitSpec};

#[derive(clap::Args)]
pub struct FitArgs {
    /// A catalog device or a profile file.
    pub device: String,
    /// The figures to fit to: `published` (the profile's figures that the
    /// card is held to: the reviewers', and the vendor's that do not
    /// conflict with them), `reviewers` (the reviewers' only), a TOML
    /// file of `[[published]]` entries (a user's own measurements, with
    /// their conditions), or a review's results.json (its main tests'
    /// IOPS and average latencies, as measured on real storage with
    /// `review --target`). Each is measured on its own format, all with
    /// one parameter set.
    #[arg(long, default_value = "published")]
    pub figures: String,
    /// With a results.json: only the tests of these names, comma-separated
    /// ("4K write", "16T/16Q", as the review names them).
    #[arg(long, value_delimiter = ',')]
    pub tests: Vec<String>,
    /// The parameters to fit, by path, comma-separated (default: every
    /// `[[fit]]` entry of the profile); each must be one of them.
    #[arg(long, value_delimiter = ',')]
    pub params: Vec<String>,
    /// Only the figures of this format (default: every format the figures
    /// name, each calibrated on its own card).
    #[arg(long)]
    pub format: Option<String>,
    /// Shrink the card N times for every evaluation (see `run --help`).
    #[arg(long, default_value_t = 64)]
    pub scale: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Points one search may try (the fit, and each leave-one-out fit);
    /// a point an earlier search calibrated is reused, not run again.
    #[arg(long, default_value_t = 40)]
    pub evals: u32,
    /// Skip the leave-one-out predictions (one more search a figure).
    #[arg(long)]
    pub no_cross_validation: bool,
    /// Write the fitted profile here (TOML, comments not kept).
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// The fit as JSON (values, figures, leave-one-out): to FILE, or to
    /// standard output with `-` or no FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<std::path::PathBuf>,
    /// No progress lines on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn fit_command(a: FitArgs) -> Result<()> {
    let profile = card::profile_load(&a.device).map_err(anyhow::Error::msg)?;
    let params = params_chosen(&profile, &a.params)?;
    let figures = figures_chosen(&profile, a.format.as_deref(), &a.figures, &a.tests)?;
    let json = a.json.as_deref().map(out::JsonSink::open).transpose()?;
    out::sigint_stops_the_lab();
    let spec = FitSpec { params, figures, scale: a.scale, seed: a.seed, evals_max: a.evals, leave_one_out: !a.no_cross_validation };
    let quiet = a.quiet;
    let (fitted, r) = fit(&profile, &spec, &|s: &str| {
        if !quiet {
            eprintln!("flashlab fit: {s}");
        }
    })?;
    outln!(
        "{} --format {} --scale {} --seed {} [simulated]: {} chains calibrated ({}; {} reused, {} tried ahead unasked, {} not needed; {} steady chains started from a card kept after their writes), cost {:.5} (sum of squared log errors)",
        profile.id,
        r.evals_by_format.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>().join(","),
        a.scale,
        a.seed,
        r.evals,
        r.evals_by_format.iter().map(|(f, n)| format!("{f} {n}")).collect::<Vec<_>>().join(", "),
        r.reused,
        r.unasked,
        r.skipped,
        r.kept_reused,
        r.cost
    );
    for (path, from, to) in &r.values {
        outln!("  {path:<48} {from:>14.6e} -> {to:>14.6e}");
    }
    for c in &r.checks {
        outln!("  {}", c.line());
    }
    if !r.leave_one_out.is_empty() {
        outln!("leave-one-out: each figure predicted by a fit made without it");
        for p in &r.leave_one_out {
            outln!(
                "  {:<60} published {:>12} predicted {:>12} error {:+.1}% (log error {:+.3})",
                p.check.what,
                lab::number::num(p.check.published),
                lab::number::num(p.check.simulated),
                p.check.error_percent,
                log_error(&p.check)
            );
        }
    }
    if let Some(path) = &a.out {
        card::write_whole(path, fitted.to_toml().as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
        outln!("wrote the fitted profile to {}", path.display());
    }
    if let Some(sink) = json {
        sink.write(&FitFile { device: &profile.id, simulated: true, scale: a.scale, seed: a.seed, evals_max: a.evals, fit: &r }, a.quiet)?;
    }
    Ok(())
}

/// The fit's JSON file.
#[derive(serde::Serialize)]
struct FitFile<'a> {
    device: &'a str,
    /// Every figure in it is of the simulated card.
    simulated: bool,
    scale: u32,
    seed: u64,
    evals_max: u32,
    fit: &'a lab::procedures::fit::Fit,
}

/// The parameters asked for, each a `[[fit]]` entry of the profile.
fn params_chosen(profile: &Profile, asked: &[String]) -> Result<Vec<FitParam>> {
    if profile.fit.is_empty() {
        bail!("{}: the profile marks no parameter as fitted ([[fit]] entries with path, min, max, why)", profile.id);
    }
    if asked.is_empty() {
        return Ok(profile.fit.clone());
    }
    asked
        .iter()
        .map(|p| {
            let known: Vec<&str> = profile.fit.iter().map(|f| f.path.as_str()).collect();
            profile
                .fit
                .iter()
                .find(|f| &f.path == p)
                .cloned()
                .with_context(|| format!("--params {p}: not a fitted parameter of {} (those are: {})", profile.id, known.join(", ")))
        })
        .collect()
}

/// The figures to fit, of the format if one is given: the profile's the
/// card is held to (a vendor figure that conflicts with the reviewers' is
/// not), the reviewers' only, or a file's.
fn figures_chosen(profile: &Profile, format: Option<&str>, figures: &str, tests: &[String]) -> Result<Vec<Published>> {
    if !tests.is_empty() && !figures.ends_with(".json") {
        bail!("--tests chooses among a results.json's tests; --figures {figures} is not one");
    }
    if let Some(f) = format {
        if !profile.formats.contains_key(f) {
            bail!("--format {f}: not a format of {} (those are: {})", profile.id, profile.format_names().join(", "));
        }
    }
    let of_format = |f: &&Published| format.is_none_or(|format| f.format_or(&profile.default_format) == format);
    let chosen: Vec<Published> = if figures == "published" {
        profile.published.iter().filter(of_format).filter(|f| f.conflict.is_none()).cloned().collect()
    } else if figures == "reviewers" {
        profile.published.iter().filter(of_format).filter(|f| f.by == card::By::Reviewer).cloned().collect()
    } else {
        let limit = if figures.ends_with(".json") { card::input::RESULTS_BYTES_MAX } else { card::input::SMALL_BYTES_MAX };
        let text = card::input::read_text(std::path::Path::new(figures), limit).with_context(|| format!("--figures {figures}: cannot read it"))?;
        let f = match figures.ends_with(".json") {
            true => {
                let results = lab::procedures::review::results_parse(&text, figures)?;
                let of = lab::procedures::figures::of_results(&results, figures, &profile.id, tests).map_err(anyhow::Error::msg)?;
                for why in &of.left_out {
                    eprintln!("flashlab fit: left out {why}");
                }
                of.figures
            }
            false => card::figures_parse(figures, &text).map_err(anyhow::Error::msg)?,
        };
        f.into_iter().filter(|f| of_format(&f)).collect()
    };
    if let Some(f) = chosen.iter().find(|f| !profile.formats.contains_key(f.format_or(&profile.default_format))) {
        bail!("{}: format {}: not a format of {} (those are: {})", f.what, f.format_or(&profile.default_format), profile.id, profile.format_names().join(", "));
    }
    if chosen.is_empty() {
        match format {
            Some(format) => bail!("no figures of format {format} to fit to"),
            None => bail!("no figures to fit to"),
        }
    }
    Ok(chosen)
}
