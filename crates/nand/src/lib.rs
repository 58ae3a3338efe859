//! The NAND media model: no clock, no knowledge of mapping. Its only I/O
//! is a data-holding array's store, which may be a file (`store`).
//!
//! The unit the FTL programs is a *multi-plane page* ("mpage"): the same page
//! index on every plane of one die, programmed by one multi-plane command.
//! Likewise a *die block* is the same block index on every plane of a die and
//! is erased by one multi-plane erase. The array tracks state at that grain,
//! which is how every host FTL in the catalog drives its dies (pblk's "sector
//! group", SPDK's "band" stripes), and keeps the model at a few bytes a block.

mod array;
pub mod cut;
mod endurance;
mod erase_counts;
pub mod errors;
mod geometry;
mod media;
pub mod store;
pub mod tap;
pub mod wear;

pub use array::{Array, KeptPagesError};
pub use endurance::Endurance;
pub use geometry::{CellType, EraseSpread, Geometry, GeometryError, Timings};
pub use media::{Media, MediaCounters, Nand, OpTag, Persist};
pub use store::{Access, PageStore, PageStoreError, OOB_BYTES};
pub use tap::{Hook, Tap};

/// A violation of the NAND rules or an address outside the array. The FTL
/// must never cause one; the array refuses the operation instead of
/// corrupting state, and the error names what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NandError {
    #[error("address out of range: die {die} block {block} page {page} (array has {dies} dies, {blocks} blocks per plane, {pages} pages per block)")]
    OutOfRange { die: u32, block: u32, page: u32, dies: u32, blocks: u32, pages: u32 },
    #[error("program out of order on die {die} block {block}: page {page} requested, next programmable page is {next}")]
    ProgramOutOfOrder { die: u32, block: u32, page: u32, next: u32 },
    #[error("program of die {die} block {block} page {page}, which is not erased (erase before program)")]
    NotErased { die: u32, block: u32, page: u32 },
    #[error("read of die {die} block {block} page {page}, which was never programmed since the last erase")]
    ReadUnwritten { die: u32, block: u32, page: u32 },
    #[error("erase of die {die} block {block} failed its status check: the block is worn out")]
    EraseFailed { die: u32, block: u32 },
    #[error("program of die {die} block {block} page {page} failed its status check: the block is worn out (the page holds nothing)")]
    ProgramFailed { die: u32, block: u32, page: u32 },
    #[error("die {die} has failed")]
    DieFailed { die: u32 },
    #[error("system area: {0}")]
    System(String),
    /// The store that holds the pages' bytes could not take them (`full`:
    /// its disk had no room): the page is not programmed.
    #[error("the store holding the pages could not write them: {why}")]
    Store { why: String, full: bool },
    #[error("power cut")]
    PowerCut,
}

impl NandError {
    /// A store's failed write, as `NandError::Store`: `full` where its
    /// disk had no room (ENOSPC, or EDQUOT: a quota reached).
    pub fn store(e: &std::io::Error) -> NandError {
        const ENOSPC: i32 = 28;
        const EDQUOT: i32 = 122;
        NandError::Store { why: e.to_string(), full: matches!(e.raw_os_error(), Some(ENOSPC | EDQUOT)) }
    }
}
