//! The block-device conformance suite: what the card must do as a block
//! device, whichever face a user sees, written once and run on the
//! simulated device's block API (`card::Device`, in `card`'s tests) and
//! on a card served over NBD (in `cli`'s tests). A target answers each
//! request, or refuses it with why; every check says what it found.

use crate::model::Sectors;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Why a target refused a request.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The simulated device's block API refused it.
    #[error(transparent)]
    Device(#[from] card::DeviceError),
    /// The served card answered with an NBD error.
    #[error("NBD error {0}")]
    Nbd(u32),
    /// The NBD exchange itself failed.
    #[error(transparent)]
    Proto(#[from] emu::nbd::ProtoError),
}

/// What a check of the suite found wrong.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// A request it needed was refused.
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error("byte {offset} reads {got:#04x}, not {want:#04x}")]
    Byte { offset: u64, got: u8, want: u8 },
    /// A request the card must refuse was taken (which one).
    #[error("{0}")]
    Taken(&'static str),
    #[error("sector {0} is not one value (the fixed checks wrote whole sectors)")]
    NotOneValue(u64),
    #[error("round {round}: sector {sector} reads {got:#04x}, not {want:#04x}")]
    Sector { round: u64, sector: u64, got: u8, want: u8 },
    /// A failure, with where it was met (the check's name, a step).
    #[error("{context}: {inner}")]
    In { context: String, inner: Box<Failure> },
}

impl Failure {
    /// This failure, met at `context`.
    fn at(self, context: impl Into<String>) -> Failure {
        Failure::In { context: context.into(), inner: Box::new(self) }
    }
}

/// A block device under test: byte offsets and lengths (multiples of 512
/// bytes, as NBD clients send), its answer or why it refused.
pub trait Target {
    /// Its size in bytes.
    fn size(&self) -> u64;
    fn read(&mut self, offset: u64, len: usize) -> Result<Vec<u8>, Refused>;
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), Refused>;
    /// Discards the whole 4 KiB slots of a range (they read zeros after);
    /// the partial slots at its ends keep their bytes.
    fn trim(&mut self, offset: u64, len: u64) -> Result<(), Refused>;
    fn write_zeroes(&mut self, offset: u64, len: u64) -> Result<(), Refused>;
    fn flush(&mut self) -> Result<(), Refused>;
}

/// One check of the suite: what it found wrong, if anything.
type Check = fn(&mut dyn Target) -> Result<(), Failure>;

/// Every check of the suite, by name, on a freshly formatted `t`; `bytes`:
/// how much the random check writes (a few times the capacity drives the
/// card through garbage collection). The first failure, named.
pub fn run(t: &mut dyn Target, bytes: u64, seed: u64) -> Result<(), Failure> {
    let checks: [(&str, Check); 7] = [
        ("a fresh card reads zeros", fresh_reads_zeros),
        ("writes read back, the newest winning", writes_read_back),
        ("an unaligned write keeps its neighbours", unaligned_write_keeps_neighbours),
        ("trim and write-zeroes read zeros", trim_and_zeroes_read_zeros),
        ("requests past the end are refused and change nothing", past_the_end_refused),
        ("a flush succeeds", |t| Ok(t.flush()?)),
        ("the first and last sectors are the card's own", edges_are_the_cards),
    ];
    for (name, check) in checks {
        check(t).map_err(|e| e.at(name))?;
    }
    random_against_a_byte_map(t, bytes, seed).map_err(|e| e.at("random requests against a byte map"))
}

fn expect_bytes(t: &mut dyn Target, offset: u64, want: &[u8]) -> Result<(), Failure> {
    let got = t.read(offset, want.len())?;
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(i) => Err(Failure::Byte { offset: offset + i as u64, got: got[i], want: want[i] }),
    }
}

fn fresh_reads_zeros(t: &mut dyn Target) -> Result<(), Failure> {
    let size = t.size();
    for offset in [0, size / 2 / 4096 * 4096, size - 4096] {
        expect_bytes(t, offset, &[0; 4096])?;
    }
    Ok(())
}

fn writes_read_back(t: &mut dyn Target) -> Result<(), Failure> {
    let at = 1 << 20;
    for (i, v) in [0x11u8, 0x22, 0x33].into_iter().enumerate() {
        t.write(at, &vec![v; 8192])?;
        expect_bytes(t, at, &vec![v; 8192]).map_err(|e| e.at(format!("after write {}", i + 1)))?;
    }
    t.write(at + 4096, &[0x44; 4096])?;
    expect_bytes(t, at, &[vec![0x33; 4096], vec![0x44; 4096]].concat())
}

fn unaligned_write_keeps_neighbours(t: &mut dyn Target) -> Result<(), Failure> {
    let at = 2 << 20;
    t.write(at, &[0x55; 8192])?;
    t.write(at + 4096 - 512, &[0x66; 1024])?;
    let want = [vec![0x55; 4096 - 512], vec![0x66; 1024], vec![0x55; 4096 - 512]].concat();
    expect_bytes(t, at, &want)
}

fn trim_and_zeroes_read_zeros(t: &mut dyn Target) -> Result<(), Failure> {
    let at = 3 << 20;
    t.write(at, &[0x77; 16384])?;
    t.trim(at + 4096, 4096)?;
    t.write_zeroes(at + 8192 + 512, 1024)?;
    let want = [vec![0x77; 4096], vec![0; 4096], vec![0x77; 512], vec![0; 1024], vec![0x77; 4096 - 1536], vec![0x77; 4096]].concat();
    expect_bytes(t, at, &want)?;
    // A trim of part of a slot leaves its bytes.
    t.trim(at, 512)?;
    expect_bytes(t, at, &[0x77; 512])
}

fn past_the_end_refused(t: &mut dyn Target) -> Result<(), Failure> {
    let size = t.size();
    let last = size - 4096;
    t.write(last, &[0x88; 4096])?;
    if t.write(size - 512, &[0x99; 1024]).is_ok() {
        return Err(Failure::Taken("a write crossing the end was taken"));
    }
    if t.write(size, &[0x99; 512]).is_ok() {
        return Err(Failure::Taken("a write at the end was taken"));
    }
    if t.read(size - 512, 1024).is_ok() {
        return Err(Failure::Taken("a read crossing the end was answered"));
    }
    if t.trim(size, 4096).is_ok() || t.write_zeroes(size - 512, 1024).is_ok() {
        return Err(Failure::Taken("a trim or write-zeroes past the end was taken"));
    }
    expect_bytes(t, last, &[0x88; 4096]).map_err(|e| e.at("after the refusals"))
}

fn edges_are_the_cards(t: &mut dyn Target) -> Result<(), Failure> {
    let size = t.size();
    t.write(0, &[0xa1; 512])?;
    t.write(size - 512, &[0xa2; 512])?;
    expect_bytes(t, 0, &[0xa1; 512])?;
    expect_bytes(t, size - 512, &[0xa2; 512])
}

/// Random reads, writes (512 B to 64 KiB, unaligned), trims and zeroing
/// over the whole card until `bytes` are written: every read returns what
/// a plain byte map (one value a sector) says.
pub fn random_against_a_byte_map(t: &mut dyn Target, bytes: u64, seed: u64) -> Result<(), Failure> {
    let sectors = t.size() / 512;
    // The suite's checks wrote before: the map starts from what the card
    // holds where they wrote, read back.
    let mut model = written_by_the_checks(t, sectors)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut written, mut round) = (0, 0u64);
    while written < bytes {
        round += 1;
        let len = [1u64, 1, 8, 8, 8, 16, 128][rng.gen_range(0..7)] * 512;
        let off = rng.gen_range(0..=sectors - len / 512) * 512;
        match rng.gen_range(0..20) {
            0 => {
                t.trim(off, len)?;
                model.fill(off.div_ceil(4096) * 4096, (off + len) / 4096 * 4096, 0);
            }
            1 => {
                t.write_zeroes(off, len)?;
                model.fill(off, off + len, 0);
            }
            2..=7 => {
                let got = t.read(off, len as usize)?;
                for (i, chunk) in got.chunks(512).enumerate() {
                    let want = model.get(off / 512 + i as u64);
                    if chunk.iter().any(|&b| b != want) {
                        return Err(Failure::Sector { round, sector: off / 512 + i as u64, got: chunk[0], want });
                    }
                }
            }
            _ => {
                let v = (round % 251) as u8 + 1;
                t.write(off, &vec![v; len as usize])?;
                model.fill(off, off + len, v);
                written += len;
            }
        }
    }
    Ok(())
}

/// The sectors the fixed checks wrote, as the card holds them (each one
/// value).
fn written_by_the_checks(t: &mut dyn Target, sectors: u64) -> Result<Sectors, Failure> {
    let mut m = Sectors::new();
    for first in [0, (1 << 20) / 512, (2 << 20) / 512, (3 << 20) / 512, sectors - 8] {
        for s in first..(first + 32).min(sectors) {
            let b = t.read(s * 512, 512)?;
            if b.iter().any(|&x| x != b[0]) {
                return Err(Failure::NotOneValue(s));
            }
            m.set(s, b[0]);
        }
    }
    Ok(m)
}
