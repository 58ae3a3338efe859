//! `flashlab endurance`: a card aged at an accelerated pace until it wears
//! out, with its life curve and the drive writes and petabytes it took
//! against the vendor's rating.

use crate::out;
use anyhow::Result;
use lab::procedures::endurance::{endurance as age, EnduranceResult, EnduranceSpec, LifePoint};
use std::time::Instant;

#[derive(clap::Args)]
pub struct EnduranceArgs {
    /// Catalog device or profile file.
    pub device: String,
    /// Workload that wears the card (a named one or a mix; see `run --help`).
    #[arg(long, short, default_value = "4k-write")]
    pub workload: String,
    /// Format (default: the device's default format).
    #[arg(long)]
    pub format: Option<String>,
    /// Shrink the card N times (see `run --help`).
    #[arg(long, default_value_t = 1024)]
    pub scale: u32,
    /// Program/erase cycles each erase stands for (default: a fiftieth of
    /// the rated cycles); host writes are counted as many times.
    #[arg(long)]
    pub acceleration: Option<u32>,
    /// Drive writes between two points of the life curve (default: a
    /// twentieth of the rated cycles).
    #[arg(long)]
    pub step: Option<f64>,
    /// Stop at this many times the rated cycles if the card has not worn
    /// out by then.
    #[arg(long, default_value_t = 20.0)]
    pub life_max: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The result as JSON: to FILE, or to standard output with `-` or no
    /// FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<std::path::PathBuf>,
    /// Accepted for symmetry with run; the life curve goes to standard
    /// output either way (it is the result).
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn endurance(a: EnduranceArgs) -> Result<()> {
    let profile = card::profile_load(&a.device).map_err(anyhow::Error::msg)?;
    let json = a.json.as_deref().map(out::JsonSink::open).transpose()?;
    let mut spec = EnduranceSpec::new(&profile, &a.workload, a.scale, a.seed);
    if let Some(f) = &a.format {
        spec.format = f.clone();
    }
    spec.cycles_per_erase = a.acceleration;
    spec.step_drive_writes = a.step.unwrap_or(0.0);
    spec.life_max = a.life_max;
    let t = Instant::now();
    out::sigint_stops_the_lab();
    // The life curve is the result: on standard output as it is taken
    // (`endurance > file` keeps it), with the summary after it; its header
    // with its first point, so that a spec refused prints only the error.
    let mut header = true;
    let r = age(&profile, &spec, &mut |p: &LifePoint| {
        if std::mem::take(&mut header) {
            outln!("{:>9} {:>8} {:>6} {:>7} {:>7} {:>5} {:>9} {:>8} {:>8}", "drive wr", "PB", "life", "bad", "eff. OP", "WA", "IOPS", "p99 ms", "max ms");
        }
        outln!("{}", point_line(p))
    })?;
    if let Some(sink) = json {
        sink.write(&r, a.quiet)?;
    }
    summary(&r);
    outln!("\nwall time {:.1} s", t.elapsed().as_secs_f64());
    if let Some(why) = &r.incomplete {
        out::interrupted_exit(&format!("INCOMPLETE: {why}"));
    }
    Ok(())
}

fn point_line(p: &LifePoint) -> String {
    format!(
        "{:>9.0} {:>8.2} {:>5.0}% {:>6.2}% {:>6.1}% {:>5.2} {:>9.0} {:>8.2} {:>8.2}",
        p.drive_writes,
        p.petabytes_written,
        p.life_used * 100.0,
        p.bad_share * 100.0,
        p.spare_share * 100.0,
        p.wa,
        p.iops,
        p.latency_p99_ms,
        p.latency_max_ms
    )
}

fn summary(r: &EnduranceResult) {
    let d = &r.device;
    outln!(
        "{} ({}), format {}, scale 1/{}, workload {} at 16T/16Q, each erase standing for {} cycles [simulated]",
        d.name,
        d.id,
        d.format,
        d.scale,
        r.spec.workload,
        r.cycles_per_erase
    );
    outln!(
        "rated: {} program/erase cycles; {}",
        r.rated_pe_cycles,
        r.rated_petabytes_written.map_or("no rated bytes written in the profile".into(), |pb| format!("{pb} PB written"))
    );
    outln!("lifetime write amplification {:.2} (data; parity not counted)", r.wa_lifetime);
    match r.at_rated_cycles {
        Some((dw, pb)) => {
            outln!("rated cycles reached (life used 100%) at {dw:.0} drive writes, {pb:.2} PB written at full size{}", vs_rating(pb, r.rated_petabytes_written))
        }
        None => outln!("the rated cycles were not reached"),
    }
    match &r.wear_out {
        Some(w) => outln!(
            "worn out (read-only) at {:.0} drive writes, {:.2} PB written at full size, life used {:.0}%{}\n  the card says: {}",
            w.drive_writes,
            w.petabytes_written,
            w.life_used * 100.0,
            vs_rating(w.petabytes_written, r.rated_petabytes_written),
            w.why
        ),
        None => outln!("not worn out by {:.0}x the rated cycles (the cap): no read-only point", r.spec.life_max),
    }
    if let Some(last) = r.points.last() {
        outln!(
            "last point: bad blocks {} from the factory, {} grown ({} at a failed program, the rest at a failed erase; {:.2}% of the blocks), spare {:.1}% of the format",
            last.bad_blocks_factory,
            last.bad_blocks_grown,
            last.bad_blocks_grown_program,
            last.bad_share * 100.0,
            last.spare_share * 100.0
        );
    }
}

fn vs_rating(pb: f64, rated: Option<f64>) -> String {
    match rated {
        Some(r) => format!(" ({:.2}x the rated {r} PB)", pb / r),
        None => String::new(),
    }
}
