//! `flashlab sweep`: a design-space sweep's points planned, run (one, or
//! all on this machine's cores) and collected.

use anyhow::{bail, Context, Result};
use lab::procedures::sweep::{self, Sweep};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: SweepCommand,
}

#[derive(clap::Subcommand)]
pub enum SweepCommand {
    /// The sweep's points, numbered, each checked, with its memory.
    #[command(after_help = "Examples:\n  flashlab sweep plan docs/sweeps/flashmax2-op.toml")]
    Plan {
        /// The sweep file (TOML: [base] and [axes]; docs/guide/usage.md).
        file: PathBuf,
    },
    /// Runs the sweep's points not yet done into DIR: one (--index), or
    /// all, --jobs at a time. Each point writes its own results file
    /// whole; a point done is skipped, so a stopped sweep resumes.
    #[command(
        after_help = "Examples:\n  flashlab sweep run docs/sweeps/flashmax2-op.toml --out op --jobs 2   # every point, 2 at a time\n  flashlab sweep run docs/sweeps/flashmax2-op.toml --out op --index 0   # point 0 alone (done: skipped)"
    )]
    Run {
        /// The sweep file.
        file: PathBuf,
        /// The directory of the points' results (made if absent; the
        /// sweep file is kept in it).
        #[arg(long)]
        out: PathBuf,
        /// Only this point (as a job array's task does).
        #[arg(long, conflicts_with = "jobs")]
        index: Option<usize>,
        /// Points at a time (default: this machine's cores).
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Writes DIR/sweep.sbatch, a Slurm job array of the sweep's points
    /// (task i runs `sweep run FILE --out DIR --index i`), its memory and
    /// time per task from the plan's bounds; --submit submits it with
    /// sbatch (--wait: until every task has ended).
    #[command(
        after_help = "Examples:\n  flashlab sweep slurm docs/sweeps/flashmax2-op.toml --out op-slurm   # writes op-slurm/sweep.sbatch; on a Slurm cluster add --submit (--wait: until it ends)"
    )]
    Slurm {
        /// The sweep file.
        file: PathBuf,
        /// The directory of the points' results and of the batch script
        /// (on storage every node reaches).
        #[arg(long)]
        out: PathBuf,
        /// The partition the tasks run in (default: the cluster's).
        #[arg(long)]
        partition: Option<String>,
        /// Time limit per task (Slurm's format, e.g. 30:00); default: the
        /// plan's bound.
        #[arg(long)]
        time: Option<String>,
        /// Memory per task in MB; default: the plan's bound.
        #[arg(long)]
        mem: Option<u64>,
        /// Submit the job array with sbatch.
        #[arg(long)]
        submit: bool,
        /// With --submit: wait until every task has ended.
        #[arg(long, requires = "submit")]
        wait: bool,
    },
    /// Writes DIR/sweep-job.json, a Kubernetes Job in Indexed completion
    /// mode: one pod a point (`completions`), each running `flashlab
    /// sweep run /sweep/sweep.toml --out /sweep --index
    /// $(JOB_COMPLETION_INDEX)` in IMAGE, DIR being the volume
    /// (`--claim`) mounted at /sweep; memory and a deadline from the
    /// plan's bounds. Apply it with `kubectl apply -f`.
    #[command(
        after_help = "Examples:\n  flashlab sweep k8s docs/sweeps/flashmax2-op.toml --out op-k8s --image registry.example/flashlab:latest   # then: kubectl apply -f op-k8s/sweep-job.json"
    )]
    K8s {
        /// The sweep file.
        file: PathBuf,
        /// Where the Job's file is written (and the sweep file kept, to
        /// copy to the claim).
        #[arg(long)]
        out: PathBuf,
        /// The container image holding `flashlab` on its PATH.
        #[arg(long)]
        image: String,
        /// The PersistentVolumeClaim holding DIR (the sweep file kept
        /// there and the points' results).
        #[arg(long, default_value = "flashlab-sweep")]
        claim: String,
        /// Pods at a time.
        #[arg(long, default_value_t = 8)]
        parallelism: usize,
    },
    /// Collects DIR's points: `sweep.json`, a table, and charts of IOPS,
    /// latency and write amplification against each axis; points missing
    /// or failed are named.
    #[command(after_help = "Examples:\n  flashlab sweep collect op")]
    Collect {
        /// The directory `sweep run` wrote.
        dir: PathBuf,
    },
}

/// The sweep file kept in the directory of its results.
const KEPT: &str = "sweep.toml";

pub fn sweep(a: SweepArgs) -> Result<()> {
    match a.command {
        SweepCommand::Plan { file } => plan(&file),
        SweepCommand::Run { file, out, index, jobs } => run(&file, &out, index, jobs),
        SweepCommand::Slurm { file, out, partition, time, mem, submit, wait } => slurm(&file, &out, partition, time, mem, submit, wait),
        SweepCommand::K8s { file, out, image, claim, parallelism } => k8s(&file, &out, &image, &claim, parallelism),
        SweepCommand::Collect { dir } => collect(&dir),
    }
}

fn settings_text(s: &std::collections::BTreeMap<String, toml::Value>) -> String {
    s.iter().map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect::<Vec<_>>().join(" ")
}

fn plan(file: &Path) -> Result<()> {
    let s = Sweep::load(file).map_err(anyhow::Error::msg)?;
    let each = |p: &sweep::Planned| {
        outln!(
            "  {:>5}  {}  [{} {} at scale {}; maps {:.0} MB, at most {:.0} s]",
            p.index,
            settings_text(&p.settings),
            p.profile.id,
            p.format,
            p.scale,
            p.memory_bytes as f64 / 1e6,
            p.time_bound_s
        );
    };
    s.plan_each(each).map_err(anyhow::Error::msg)?;
    outln!("{}: {} points ({} of {} axes), each checked", file.display(), s.point_count(), format!("{:?}", s.mode).to_lowercase(), s.axes.len());
    Ok(())
}

/// Keeps the sweep file in `dir`, or checks that the one kept there is
/// the same sweep.
fn keep(file: &Path, dir: &Path) -> Result<()> {
    let text = card::input::read_text(file, card::input::SMALL_BYTES_MAX).with_context(|| file.display().to_string())?;
    lab::outputs::files::out_dir_prepare(dir)?;
    let kept = dir.join(KEPT);
    match std::fs::read_to_string(&kept) {
        Ok(k) if k == text => Ok(()),
        Ok(_) => bail!("{} holds another sweep's results ({} differs from {}): choose another --out", dir.display(), kept.display(), file.display()),
        // Several tasks may keep it at once: one that lost the race finds
        // the same file there.
        Err(_) => match card::write_whole(&kept, text.as_bytes()) {
            Err(_) if std::fs::read_to_string(&kept).is_ok_and(|k| k == text) => Ok(()),
            r => Ok(r.with_context(|| kept.display().to_string())?),
        },
    }
}

fn run(file: &Path, out: &Path, index: Option<usize>, jobs: Option<usize>) -> Result<()> {
    let s = Sweep::load(file).map_err(anyhow::Error::msg)?;
    keep(file, out)?;
    crate::out::sigint_stops_the_lab();
    if let Some(i) = index {
        let p = s.plan(i).map_err(anyhow::Error::msg)?;
        match sweep::points::run_point(&s, &p, out).map_err(anyhow::Error::msg)? {
            Some(_) => eprintln!("point {i} done: {}", sweep::points::point_path(out, i).display()),
            None => eprintln!("point {i} was done before: {}", sweep::points::point_path(out, i).display()),
        }
        return Ok(());
    }
    let jobs = jobs.unwrap_or_else(lab::runs::threads::cores);
    let n = s.point_count();
    let each = |i: usize, r: &sweep::points::PointOutcome| match r {
        Ok(Some(_)) => eprintln!("  point {i} done"),
        Ok(None) => {}
        Err(_) if lab::interrupt::asked() => eprintln!("  point {i} stopped: it runs again on the next `sweep run`"),
        Err(why) => eprintln!("  point {i} FAILED: {why}"),
    };
    let sweep::points::RunAll { done, before, failed } = sweep::points::run_all(&s, out, jobs, &each).map_err(anyhow::Error::msg)?;
    outln!("{n} points: {done} run now, {before} done before, {} failed", failed.len());
    if lab::interrupt::asked() {
        crate::out::interrupted_exit("interrupted: the points done are kept; `sweep run` again resumes");
    }
    if !failed.is_empty() {
        bail!("{} point(s) failed: {}", failed.len(), failed.iter().map(|(i, why)| format!("{i} ({why})")).collect::<Vec<_>>().join("; "));
    }
    Ok(())
}

/// A task's memory request, MB: the largest point's maps with room for
/// the rest of the process.
fn mem_mb(planned: &sweep::PlanSummary) -> u64 {
    (planned.memory_bytes_max as f64 * 1.5 / 1e6).ceil() as u64 + 256
}

/// Slurm's `minutes:seconds` of a time, rounded up to whole minutes.
fn slurm_time(seconds: f64) -> String {
    format!("{}:00", (seconds / 60.0).ceil().max(1.0) as u64)
}

#[allow(clippy::too_many_arguments)]
fn slurm(file: &Path, out: &Path, partition: Option<String>, time: Option<String>, mem: Option<u64>, submit: bool, wait: bool) -> Result<()> {
    let s = Sweep::load(file).map_err(anyhow::Error::msg)?;
    let planned = s.plan_all().map_err(anyhow::Error::msg)?;
    keep(file, out)?;
    let abs = |p: &Path| std::fs::canonicalize(p).with_context(|| p.display().to_string());
    let (file, out) = (abs(file)?, abs(out)?);
    let exe = std::env::current_exe().context("the flashlab binary")?;
    let time = time.unwrap_or_else(|| slurm_time(planned.time_bound_s_max));
    let mut script = String::from("#!/bin/bash\n");
    script += &format!("#SBATCH --job-name=flashlab-sweep\n#SBATCH --array=0-{}\n", planned.points - 1);
    script += &format!("#SBATCH --output={}/slurm-%A_%a.out\n#SBATCH --cpus-per-task=1\n", out.display());
    script += &format!("#SBATCH --mem={}M\n#SBATCH --time={time}\n", mem.unwrap_or_else(|| mem_mb(&planned)));
    if let Some(p) = partition {
        script += &format!("#SBATCH --partition={p}\n");
    }
    let word = |p: &Path| crate::out::shell_word(&p.display().to_string());
    script += &format!("exec {} sweep run {} --out {} --index \"$SLURM_ARRAY_TASK_ID\"\n", word(&exe), word(&file), word(&out));
    let path = out.join("sweep.sbatch");
    card::write_whole(&path, script.as_bytes()).with_context(|| path.display().to_string())?;
    eprintln!("{}: a job array of {} tasks", path.display(), planned.points);
    if submit {
        let mut sbatch = std::process::Command::new("sbatch");
        if wait {
            sbatch.arg("--wait");
        }
        let o = sbatch.arg(&path).output().context("sbatch (Debian's slurm-client)")?;
        let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        if !o.status.success() {
            let why = if wait && said.contains("Submitted batch job") { "a task failed (its output: slurm-JOB_TASK.out there)" } else { "refused" };
            bail!("sbatch {}: {why}: {}", path.display(), said.trim());
        }
        outln!("{}", said.trim());
    }
    Ok(())
}

/// Where a pod mounts the sweep's directory.
pub const POD_DIR: &str = "/sweep";

fn k8s(file: &Path, out: &Path, image: &str, claim: &str, parallelism: usize) -> Result<()> {
    let s = Sweep::load(file).map_err(anyhow::Error::msg)?;
    let planned = s.plan_all().map_err(anyhow::Error::msg)?;
    if image.is_empty() || parallelism == 0 {
        bail!("--image names a container image; --parallelism is 1 or more");
    }
    keep(file, out)?;
    let mem = format!("{}Mi", mem_mb(&planned));
    let deadline = planned.time_bound_s_max.ceil() as u64 + 60;
    let name: String = file
        .file_stem()
        .map_or("sweep".into(), |n| n.to_string_lossy().to_lowercase())
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let job = serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": format!("flashlab-sweep-{}", name.trim_matches('-')) },
        "spec": {
            "completionMode": "Indexed",
            "completions": planned.points,
            "parallelism": parallelism.min(planned.points),
            "backoffLimit": planned.points,
            "template": { "spec": {
                "restartPolicy": "Never",
                "activeDeadlineSeconds": deadline,
                "containers": [{
                    "name": "point",
                    "image": image,
                    "command": ["flashlab", "sweep", "run", format!("{POD_DIR}/{KEPT}"), "--out", POD_DIR, "--index", "$(JOB_COMPLETION_INDEX)"],
                    "env": [{ "name": "JOB_COMPLETION_INDEX", "valueFrom": { "fieldRef": { "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']" } } }],
                    "resources": { "requests": { "cpu": "1", "memory": mem }, "limits": { "memory": mem } },
                    "volumeMounts": [{ "name": "sweep", "mountPath": POD_DIR }],
                }],
                "volumes": [{ "name": "sweep", "persistentVolumeClaim": { "claimName": claim } }],
            }},
        },
    });
    let path = out.join("sweep-job.json");
    card::write_whole(&path, (serde_json::to_string_pretty(&job)? + "\n").as_bytes()).with_context(|| path.display().to_string())?;
    eprintln!("{}: an Indexed Job of {} pods; put {} on the volume '{claim}' and `kubectl apply -f` it", path.display(), planned.points, out.display());
    Ok(())
}

fn collect(dir: &Path) -> Result<()> {
    let kept = dir.join(KEPT);
    let s = Sweep::load(&kept).map_err(|e| anyhow::anyhow!("{e} (is {} a directory `sweep run` wrote?)", dir.display()))?;
    let c = sweep::collect::collect(&s, dir).map_err(anyhow::Error::msg)?;
    outln!("{:>5} {:>12} {:>9} {:>9} {:>9} {:>6}  settings [simulated]", "point", "IOPS", "MB/s", "avg ms", "p99 ms", "WA");
    for r in &c.rows {
        let test = r.test.as_ref().map_or(String::new(), |t| format!(" ({t})"));
        let wa = r.write_amplification.map_or("-".into(), |w| format!("{w:.2}"));
        outln!(
            "{:>5} {:>12.0} {:>9.1} {:>9.3} {:>9.3} {:>6}  {}{test}",
            r.index,
            r.iops,
            r.mb_per_s,
            r.latency_avg_ms,
            r.latency_p99_ms,
            wa,
            settings_text(&r.settings)
        );
    }
    let text = serde_json::to_string_pretty(&c)? + "\n";
    lab::outputs::files::file_write(&dir.join("sweep.json"), text.as_bytes())?;
    if !c.rows.is_empty() {
        for axis in &c.axes {
            for (stem, label, figure) in lab::outputs::sweep::FIGURES {
                let path = dir.join(format!("{stem}-by-{}.svg", axis.replace('.', "-")));
                lab::outputs::files::file_write(&path, lab::outputs::sweep::axis_chart(&c, axis, label, figure).as_bytes())?;
            }
        }
    }
    eprintln!("sweep.json and a chart of each figure against each axis in {}", dir.display());
    if !c.missing.is_empty() || !c.failed.is_empty() {
        let failed: Vec<String> = c.failed.iter().map(|(i, why)| format!("{i} ({why})")).collect();
        bail!(
            "{} of {} points collected; missing: {:?}; failed: {}",
            c.rows.len(),
            c.points,
            c.missing,
            if failed.is_empty() { "none".into() } else { failed.join("; ") }
        );
    }
    Ok(())
}
