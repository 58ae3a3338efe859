//! Calibration: every figure a profile publishes (the reviewers'
//! measurements and the vendor's ratings), each reproduced under its own
//! conditions and judged (see `published`).
//!
//! The card states are built as their publishers built them:
//! - fresh: a secure-erased card, the workload's first round;
//! - filled: a secure-erased card filled once with 128 KiB sequential
//!   writes at 16T/16Q, then idle; reads first, writes last, the card left
//!   idle between workloads;
//! - steady: the reviewers' procedure: secure erase, precondition with the
//!   workload's preconditioner at 16T/16Q (for the reviewers' hours where
//!   the profile gives them, else to SNIA steady state), then the
//!   workloads, writes first, each for `rounds` rounds.

use crate::procedures::prefixes::{Prefix, Prefixes};
use crate::runs::phase::Phase;
use crate::runs::published::{for_format, mix_of, of_phase, same_load, Check};
use crate::runs::run::{Length, Rule, RunError, Session, REVIEWERS_QUEUE_DEPTH, REVIEWERS_THREADS};
use crate::runs::workload::Mix;
use card::{Metric, Profile, Published, State};
use serde::Serialize;

/// The rule a profile's published steady-state figures came from: the
/// reviewers' hours where the profile states them, else SNIA steady state.
pub fn rule_for(profile: &Profile) -> Rule {
    Rule::for_profile(profile, Rule::SNIA_DEFAULT)
}

/// A simulated figure with no published one to judge it by, shown beside
/// those that have (the 4 KiB latency beside a vendor's 512 B one).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Beside {
    pub what: String,
    pub metric: Metric,
    pub simulated: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Calibration {
    pub device: String,
    pub format: String,
    pub scale: u32,
    pub seed: u64,
    /// The preconditioning phases of the steady-state figures.
    pub preconditions: Vec<Phase>,
    /// Every measured phase and the state of the card it ran on.
    pub phases: Vec<(State, Phase)>,
    pub checks: Vec<Check>,
    pub beside: Vec<Beside>,
}

impl Calibration {
    /// Checks outside tolerance with no stated reason.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.failed())
    }
}

/// One load to measure: a workload at threads x queue depth, on a host.
#[derive(Clone)]
struct Load {
    mix: Mix,
    threads: u32,
    qd: u32,
    /// The host's id.
    host: String,
}

impl Load {
    fn of(p: &Published) -> Result<Load, RunError> {
        Ok(Load { mix: mix_of(p)?, threads: p.threads, qd: p.qd, host: p.host_id().to_string() })
    }
    fn same(&self, o: &Load) -> bool {
        self.threads == o.threads && self.qd == o.qd && same_load(&self.mix, &o.mix) && self.host == o.host
    }
    /// Its name in progress and results: the host's id where it is not
    /// the reviewers' Linux server.
    fn name(&self) -> String {
        let on = card::host_not_default(Some(&self.host)).map_or(String::new(), |h| format!(" on {h}"));
        format!("{} {}T/{}Q{on}", self.mix.name, self.threads, self.qd)
    }
}

/// The distinct loads of the figures in `state`, in the order `key` sorts.
fn loads(figures: &[&Published], state: State, key: impl Fn(&Load) -> u32) -> Result<Vec<Load>, RunError> {
    let mut out: Vec<Load> = Vec::new();
    for p in figures.iter().filter(|p| p.state == state) {
        let l = Load::of(p)?;
        if !out.iter().any(|o| o.same(&l)) {
            out.push(l);
        }
    }
    out.sort_by_key(|l| key(l));
    Ok(out)
}

/// The 128 KiB sequential fill of the filled state.
pub fn fill_mix() -> Mix {
    Mix::parse("read=0;bs=128k/100;pattern=seq").expect("built in")
}

/// Every published figure of `profile`'s `format`, each measured in its
/// own card state (fresh, filled, steady) and judged. Each card state is
/// its own card (a chain of phases from a secure erase), so the chains
/// run on the machine's cores at once; each is seeded alike, so the
/// result is the same as one after another.
pub fn calibrate(
    profile: &Profile,
    format: &str,
    scale: u32,
    seed: u64,
    rounds: u32,
    progress: &mut (dyn FnMut(&crate::Progress) + Send),
) -> Result<Calibration, RunError> {
    calibrate_keeping(profile, format, scale, seed, rounds, None, progress)
}

/// As `calibrate`, each steady chain starting from a card `kept` holds
/// where one is kept for it (its write-only part run at the same numbers
/// but those that time host reads alone), and leaving its card there
/// where none is: the result is the same to the bit.
pub fn calibrate_keeping(
    profile: &Profile,
    format: &str,
    scale: u32,
    seed: u64,
    rounds: u32,
    kept: Option<&Prefixes>,
    progress: &mut (dyn FnMut(&crate::Progress) + Send),
) -> Result<Calibration, RunError> {
    let figures: Vec<&Published> = for_format(profile, format).collect();
    let chains = chains(&figures)?;
    let hosted = hosted_profiles(profile, &chains)?;
    let run = |chain: &Chain, progress: &mut dyn FnMut(&crate::Progress)| {
        let on = hosted.iter().find(|p| p.platform.id == chain.host()).expect("a profile for every chain's host");
        let session = || Session::new(on, format, scale, seed, None);
        let kept = kept.map(|k| (k, on, format!("{format} scale {scale} seed {seed} rounds {rounds}")));
        chain.run(&session, rule_for(on), rounds, kept.as_ref(), progress)
    };
    let (mut phases, mut preconditions, mut beside) = (Vec::new(), Vec::new(), Vec::new());
    for out in on_cores(&chains, &run, progress)? {
        phases.extend(out.phases);
        preconditions.extend(out.precondition);
        beside.extend(out.beside);
    }
    go_on()?;
    let judged: Vec<(State, &Phase)> = phases.iter().map(|(s, p)| (*s, p)).collect();
    let checks = crate::runs::published::compare(profile, format, &judged, None);
    debug_assert_eq!(checks.len(), figures.len(), "every figure found its phase");
    Ok(Calibration { device: profile.id.clone(), format: format.to_string(), scale, seed, preconditions, phases, checks, beside })
}

/// The chains that measure `figures`, cheapest first within each host
/// (the reviewers' Linux server first): a fresh card per load, the filled
/// card, then a card per preconditioner.
fn chains(figures: &[&Published]) -> Result<Vec<Chain>, RunError> {
    let mut hosts: Vec<&str> = vec![card::DEFAULT_HOST];
    for p in figures {
        if !hosts.contains(&p.host_id()) {
            hosts.push(p.host_id());
        }
    }
    let mut chains = Vec::new();
    for h in hosts {
        let on: Vec<&Published> = figures.iter().copied().filter(|p| p.host_id() == h).collect();
        chains.extend(chains_on_one_host(&on)?);
    }
    Ok(chains)
}

/// As [`chains`], for figures all measured on one host.
fn chains_on_one_host(figures: &[&Published]) -> Result<Vec<Chain>, RunError> {
    let mut chains: Vec<Chain> = loads(figures, State::Fresh, |_| 0)?.into_iter().map(Chain::Fresh).collect();
    let filled = loads(figures, State::Filled, |l| 1_000_000 - l.mix.read_ppm)?;
    if !filled.is_empty() {
        chains.push(Chain::Filled(filled));
    }
    let steady = loads(figures, State::Steady, |l| l.mix.read_ppm)?;
    let mut pre_mixes: Vec<Mix> = Vec::new();
    for l in &steady {
        let pm = l.mix.preconditioner();
        if !pre_mixes.iter().any(|m| same_load(m, &pm)) {
            pre_mixes.push(pm);
        }
    }
    for pm in pre_mixes {
        let loads = steady.iter().filter(|l| same_load(&l.mix.preconditioner(), &pm)).cloned().collect();
        chains.push(Chain::Steady(pm, loads));
    }
    Ok(chains)
}

/// The profile on each host the chains run on (the profile itself on its
/// own host).
fn hosted_profiles(profile: &Profile, chains: &[Chain]) -> Result<Vec<Profile>, RunError> {
    let mut out = vec![profile.clone()];
    for c in chains {
        if !out.iter().any(|p| p.platform.id == c.host()) {
            out.push(profile.on_host(&card::host_load(c.host())?)?);
        }
    }
    Ok(out)
}

/// `figures` split by the chain `calibrate` measures each on (indices
/// into `figures`), in the order `calibrate` runs the chains (cheapest
/// first). Each chain is its own card from a secure erase, seeded alike,
/// so a calibration of one group's figures alone gives each of them the
/// value a calibration of all `figures` gives.
pub fn chain_groups(figures: &[&Published]) -> Result<Vec<Vec<usize>>, RunError> {
    let chains = chains(figures)?;
    let mut groups = vec![Vec::new(); chains.len()];
    for (i, p) in figures.iter().enumerate() {
        let l = Load::of(p)?;
        let c = chains.iter().position(|c| c.measures(p.state, &l)).expect("a chain for every figure");
        groups[c].push(i);
    }
    debug_assert!(groups.iter().all(|g| !g.is_empty()), "every chain measures a figure");
    Ok(groups)
}

/// Whether calibrating `figures` serves any host read: a load, its
/// preconditioner or the filled card's fill that reads (the chains
/// `calibrate` builds run nothing else).
pub fn host_reads(figures: &[&Published]) -> Result<bool, RunError> {
    let mut mixes = vec![fill_mix()];
    for p in figures {
        let m = mix_of(p)?;
        mixes.push(m.preconditioner());
        mixes.push(m);
    }
    Ok(mixes.iter().any(|m| m.read_ppm > 0))
}

/// One card's chain of phases from a secure erase.
enum Chain {
    /// A workload's first round on a fresh card.
    Fresh(Load),
    /// The filled card's loads, one card filled once.
    Filled(Vec<Load>),
    /// A preconditioner, then the loads it prepares.
    Steady(Mix, Vec<Load>),
}

/// What a chain measured.
#[derive(Default)]
struct ChainOut {
    phases: Vec<(State, Phase)>,
    precondition: Option<Phase>,
    beside: Vec<Beside>,
}

/// Where a calibration keeps its chains' cards: the kept cards, the
/// profile, and what else names the card (format, scale, seed, rounds).
type Keeping<'a> = (&'a Prefixes, &'a Profile, String);

/// Builds a chain's card.
type NewSession<'a> = dyn Fn() -> Result<Session, RunError> + 'a;

impl Chain {
    /// The id of the host its card runs on (every load's).
    fn host(&self) -> &str {
        let first = match self {
            Chain::Fresh(l) => l,
            Chain::Filled(ls) | Chain::Steady(_, ls) => &ls[0],
        };
        &first.host
    }

    /// Whether the chain measures load `l` in `state`.
    fn measures(&self, state: State, l: &Load) -> bool {
        match self {
            Chain::Fresh(f) => state == State::Fresh && f.same(l),
            Chain::Filled(ls) => state == State::Filled && ls.iter().any(|f| f.same(l)),
            Chain::Steady(_, ls) => state == State::Steady && ls.iter().any(|f| f.same(l)),
        }
    }

    /// Runs the chain on a card `new` builds (a steady chain that starts
    /// from a kept card builds none).
    fn run(&self, new: &NewSession, rule: Rule, rounds: u32, kept: Option<&Keeping>, progress: &mut dyn FnMut(&crate::Progress)) -> Result<ChainOut, RunError> {
        let mut out = ChainOut::default();
        match self {
            Chain::Fresh(l) => {
                let mut s = new()?;
                let round = Length::Duration(s.interval_ns);
                out.phases.push((State::Fresh, s.measure(&format!("fresh {}", l.name()), &l.mix, l.threads, l.qd, round, progress)?));
            }
            Chain::Filled(loads) => out.beside = filled_phases(new()?, loads, &mut out.phases, progress)?,
            Chain::Steady(pm, loads) => {
                // The loads before the first that reads, and their
                // preconditioning, are the write-only part.
                let writes = loads.iter().position(|l| l.mix.read_ppm > 0).unwrap_or(loads.len());
                let (mut s, next) = match kept.filter(|_| pm.read_ppm == 0 && writes < loads.len()) {
                    Some(k) => (write_only_part(new, k, pm, rule, &loads[..writes], rounds, &mut out, progress)?, writes),
                    None => {
                        let mut s = new()?;
                        out.precondition = Some(s.precondition(pm, rule, progress)?);
                        go_on()?;
                        (s, 0)
                    }
                };
                steady_loads(&mut s, &loads[next..], rounds, &mut out.phases, progress)?;
            }
        }
        go_on()?;
        Ok(out)
    }
}

/// A steady chain's write-only part (preconditioning with `pm`, then
/// `loads`): the card kept for it, given the profile's numbers that time
/// host reads, or one `new` builds and the part runs on, then kept.
/// Another calibration that needs the same card waits while it runs.
#[allow(clippy::too_many_arguments)]
fn write_only_part(
    new: &NewSession,
    (kept, profile, card): &Keeping,
    pm: &Mix,
    rule: Rule,
    loads: &[Load],
    rounds: u32,
    out: &mut ChainOut,
    progress: &mut dyn FnMut(&crate::Progress),
) -> Result<Session, RunError> {
    debug_assert!(pm.read_ppm == 0 && loads.iter().all(|l| l.mix.read_ppm == 0), "the part serves no host read");
    let slot = kept.slot(profile, format!("{card}: {pm:?} then {:?}", loads.iter().map(Load::name).collect::<Vec<_>>()));
    let mut prefix = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(p) = &*prefix {
        let mut s = p.session.snapshot().expect("a kept card copies");
        s.device.host_reads_retimed(profile)?;
        (out.precondition, out.phases) = (Some(p.precondition.clone()), p.phases.clone());
        kept.used();
        return Ok(s);
    }
    let mut s = new()?;
    let precondition = s.precondition(pm, rule, progress)?;
    go_on()?;
    steady_loads(&mut s, loads, rounds, &mut out.phases, progress)?;
    if let Some(copy) = s.snapshot() {
        *prefix = Some(Prefix { session: copy, precondition: precondition.clone(), phases: out.phases.clone() });
    }
    out.precondition = Some(precondition);
    Ok(s)
}

/// Measures `loads` one after another on the preconditioned card `s`,
/// each for `rounds` rounds.
fn steady_loads(
    s: &mut Session,
    loads: &[Load],
    rounds: u32,
    phases: &mut Vec<(State, Phase)>,
    progress: &mut dyn FnMut(&crate::Progress),
) -> Result<(), RunError> {
    let length = Length::Duration(rounds.max(1) as u64 * s.interval_ns);
    for l in loads {
        phases.push((State::Steady, s.measure(&l.name(), &l.mix, l.threads, l.qd, length, progress)?));
        go_on()?;
    }
    Ok(())
}

/// Runs `run` on each chain, as many at once as the machine has cores;
/// the outputs in the chains' order (the first error, in that order, if
/// any). Progress reports pass one at a time.
fn on_cores<F>(chains: &[Chain], run: &F, progress: &mut (dyn FnMut(&crate::Progress) + Send)) -> Result<Vec<ChainOut>, RunError>
where
    F: Fn(&Chain, &mut dyn FnMut(&crate::Progress)) -> Result<ChainOut, RunError> + Sync,
{
    let progress = std::sync::Mutex::new(progress);
    let order: Vec<usize> = (0..chains.len()).collect();
    let outs = crate::runs::threads::on_threads(&order, crate::runs::threads::cores(), |i| {
        run(&chains[i], &mut |p| (progress.lock().expect("a progress report panicked"))(p))
    });
    // A chain not started comes after a failed one, or after a stop.
    outs.into_iter().map(|r| r.unwrap_or(Err(RunError::Interrupted))).collect()
}

/// The filled card's figures, on one card filled once with 128 KiB
/// sequential writes and left idle between loads; beside a queue-depth-1
/// figure at a smaller size, the 4 KiB latency (returned).
fn filled_phases(
    mut s: Session,
    filled: &[Load],
    phases: &mut Vec<(State, Phase)>,
    progress: &mut dyn FnMut(&crate::Progress),
) -> Result<Vec<Beside>, RunError> {
    let fill = fill_mix();
    let ios = s.device.capacity_bytes() / fill.max_bytes() as u64;
    s.measure("fill", &fill, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, Length::Ios(ios), progress)?;
    go_on()?;
    s.idle();
    let mut twins = Vec::new();
    for l in filled {
        let round = Length::Duration(s.interval_ns);
        phases.push((State::Filled, s.measure(&format!("filled {}", l.name()), &l.mix, l.threads, l.qd, round, progress)?));
        go_on()?;
        s.idle();
        if l.threads == 1 && l.qd == 1 && l.mix.sizes != [(4096, 1_000_000)] {
            let mut m = l.mix.clone();
            m.sizes = vec![(4096, 1_000_000)];
            m.name = format!("{}% read, 4 KiB", m.read_ppm / 10_000);
            twins.push(Load { mix: m, threads: 1, qd: 1, host: l.host.clone() });
        }
    }
    let mut beside = Vec::new();
    for t in twins.iter().filter(|t| !filled.iter().any(|l| l.same(t))) {
        let ph = s.measure(&format!("filled {}", t.name()), &t.mix, 1, 1, Length::Duration(s.interval_ns), progress)?;
        s.idle();
        beside.push(Beside {
            what: format!("4 KiB random {} at 1T/1Q, filled, idle", if t.mix.read_ppm == 1_000_000 { "read" } else { "write" }),
            metric: Metric::LatencyAvgUs,
            simulated: of_phase(Metric::LatencyAvgUs, &ph.summary.all),
        });
    }
    Ok(beside)
}

/// `Err(Interrupted)` once a stop was asked: a calibration judges every
/// figure or none, so a cut one keeps nothing.
fn go_on() -> Result<(), RunError> {
    match crate::runs::interrupt::asked() {
        true => Err(RunError::Interrupted),
        false => Ok(()),
    }
}
