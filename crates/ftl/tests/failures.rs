//! Dies that fail, blocks that wear out and read reclaim, on a card full
//! of data: what each failure costs, what the card reports, and that
//! every LBA reads its data, an I/O error where it was lost, never other
//! bytes.

mod common;

use common::{array, config, geometry, stamp};
use ftl::{Ftl, FtlError, ReadFrom};
use nand::Array;
use units::SLOT_BYTES;

/// The card full of data: every LBA written once.
fn filled() -> (Ftl<Array>, u32) {
    let cfg = config(true);
    let mut ftl = Ftl::format(Array::new(geometry(), true), cfg.clone()).unwrap();
    for lba in 0..cfg.user_slots as u32 {
        ftl.write(lba, Some(&stamp(lba, 1))).unwrap();
    }
    (ftl, cfg.user_slots as u32)
}

/// One die fails: every LBA still reads (through its stripe); the
/// rebuild empties the stripes that hold the die and narrows new ones; a
/// second die of the same group failing then loses nothing.
#[test]
fn a_die_fails_and_the_rebuild_restores_redundancy() {
    let (mut ftl, user) = filled();
    let f = ftl.die_fail(1).unwrap();
    assert!(f.lbas_lost.is_empty() && f.read_only.is_none());
    assert!(f.slots_to_rebuild > 0 && f.slots_to_rebuild < user as u64, "{f:?}");
    let mut out = vec![0u8; SLOT_BYTES as usize];
    for lba in 0..user {
        ftl.read(lba, Some(&mut out)).unwrap();
        assert_eq!(out, stamp(lba, 1), "lba {lba} through the stripe");
    }
    assert!(ftl.fault_counters().degraded_page_reads > 0);
    let mut moved = 0;
    while ftl.rebuilding() {
        moved += ftl.rebuild_step(10).unwrap();
        ftl.check().unwrap();
    }
    assert_eq!(ftl.rebuild_left(), 0);
    assert!(moved >= f.slots_to_rebuild, "moved {moved}, {} to move", f.slots_to_rebuild);
    let f2 = ftl.die_fail(2).unwrap();
    assert!(f2.lbas_lost.is_empty(), "after the rebuild a second die of the group loses nothing: {f2:?}");
    for lba in 0..user {
        ftl.read(lba, Some(&mut out)).unwrap();
        assert_eq!(out, stamp(lba, 1));
    }
    ftl.check().unwrap();
}

/// Two dies of one stripe group fail before the rebuild: the slots they
/// held are reported lost and read as errors, never as other bytes; the
/// rest reads back; a lost LBA written again reads its new data.
#[test]
fn a_second_failure_before_the_rebuild_loses_data_honestly() {
    let (mut ftl, user) = filled();
    ftl.die_fail(0).unwrap();
    let f = ftl.die_fail(3).unwrap();
    assert!(!f.lbas_lost.is_empty(), "two dies of one group: {f:?}");
    let mut out = vec![0u8; SLOT_BYTES as usize];
    for lba in 0..user {
        match ftl.read(lba, Some(&mut out)) {
            Err(FtlError::Lost { lba: l }) => assert!(l == lba && f.lbas_lost.contains(&lba)),
            Ok(_) => {
                assert!(!f.lbas_lost.contains(&lba), "lba {lba} reported lost but reads");
                assert_eq!(out, stamp(lba, 1));
            }
            Err(e) => panic!("lba {lba}: {e}"),
        }
    }
    let lba = f.lbas_lost[0];
    ftl.write(lba, Some(&stamp(lba, 2))).unwrap();
    ftl.read(lba, Some(&mut out)).unwrap();
    assert_eq!(out, stamp(lba, 2));
    assert_eq!(ftl.lbas_lost().len(), f.lbas_lost.len() - 1);
    ftl.check().unwrap();
}

/// A lost LBA trimmed since, or written since, is lost no more after a
/// restart: the system area still names it, and the mount sees the trim
/// journal's newer trim (it read as lost again: found by the fault
/// property test) or the newer copy.
#[test]
fn a_lost_lba_trimmed_or_written_since_stays_found_across_a_restart() {
    let (mut ftl, _) = filled();
    ftl.die_fail(0).unwrap();
    let f = ftl.die_fail(3).unwrap();
    assert!(f.lbas_lost.len() >= 3, "two dies of one group: {f:?}");
    let (trimmed, written, still) = (f.lbas_lost[0], f.lbas_lost[1], f.lbas_lost[2]);
    // The trim last: nothing after it writes the system area again.
    ftl.write(written, Some(&stamp(written, 2))).unwrap();
    ftl.trim(trimmed).unwrap();
    let store = ftl.into_media().into_store();
    let (mut m, _) = Ftl::mount(Array::with_store(geometry(), store), config(true)).unwrap();
    let mut out = vec![0u8; SLOT_BYTES as usize];
    assert_eq!(m.read(trimmed, Some(&mut out)).unwrap(), ReadFrom::Unmapped);
    assert!(out.iter().all(|&b| b == 0), "a trimmed LBA reads zeros");
    m.read(written, Some(&mut out)).unwrap();
    assert_eq!(out, stamp(written, 2));
    assert!(matches!(m.read(still, Some(&mut out)), Err(FtlError::Lost { .. })));
    assert_eq!(m.lbas_lost().len(), f.lbas_lost.len() - 2);
    m.check().unwrap();
}

/// The dead dies and the lost LBAs survive a power cut: the mount knows
/// them from the system area.
#[test]
fn failures_are_remembered_across_a_restart() {
    let (mut ftl, user) = filled();
    ftl.die_fail(0).unwrap();
    let f = ftl.die_fail(3).unwrap();
    let store = ftl.into_media().into_store();
    let (mut m, _) = Ftl::mount(Array::with_store(geometry(), store), config(true)).unwrap();
    assert_eq!(m.dead_dies(), &[0, 3]);
    assert_eq!(m.lbas_lost(), f.lbas_lost);
    m.check().unwrap();
    let mut out = vec![0u8; SLOT_BYTES as usize];
    for lba in 0..user {
        match m.read(lba, Some(&mut out)) {
            Err(FtlError::Lost { .. }) => assert!(f.lbas_lost.contains(&lba)),
            r => {
                r.unwrap();
                assert_eq!(out, stamp(lba, 1), "lba {lba}");
            }
        }
    }
}

/// Blocks wear out (each stands a Weibull-drawn number of erases) until
/// the good ones no longer hold the format: the card turns read-only and
/// says why; every write it took reads back, after a restart too, which
/// keeps the bad-block table and the read-only state; a smaller format
/// fits the blocks left and takes writes again.
#[test]
fn a_card_worn_out_turns_read_only_and_keeps_every_write_it_took() {
    let cfg = config(true);
    let user = cfg.user_slots as u32;
    let wear = Some((0.02, 30.0));
    let mut ftl = Ftl::format(array(None, wear), cfg.clone()).unwrap();
    let factory = ftl.bad_blocks().factory;
    let mut last = vec![0u32; user as usize];
    let mut x = 1u64;
    let why = loop {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let lba = (x >> 33) as u32 % user;
        let g = last[lba as usize] + 1;
        match ftl.write(lba, Some(&stamp(lba, g))) {
            Ok(()) => last[lba as usize] = g,
            Err(FtlError::ReadOnly(why)) => break why,
            Err(e) => panic!("lba {lba}: {e}"),
        }
    };
    assert!(why.contains("worn out") && why.contains("blocks are bad"), "{why}");
    let bad = ftl.bad_blocks().clone();
    assert!(bad.grown > 0 && bad.factory == factory, "{bad:?}");
    // Half the blocks wear out at a program: their pages were written
    // again and the stripes that lacked them moved.
    assert!(bad.grown_program > 0 && bad.grown_program < bad.grown, "{bad:?}");
    let f = ftl.fault_counters();
    assert!(f.slots_rewritten > 0 && f.slots_reprotected > 0, "{f:?}");
    ftl.check().unwrap();
    let verify = |ftl: &mut Ftl<Array>| {
        let mut out = vec![0u8; SLOT_BYTES as usize];
        for lba in 0..user {
            ftl.read(lba, Some(&mut out)).unwrap();
            let want = if last[lba as usize] == 0 { vec![0; SLOT_BYTES as usize] } else { stamp(lba, last[lba as usize]) };
            assert_eq!(out, want, "lba {lba}");
        }
    };
    verify(&mut ftl);
    let store = ftl.into_media().into_store();
    let (mut m, _) = Ftl::mount(array(store, wear), cfg.clone()).unwrap();
    assert_eq!(m.bad_blocks(), &bad);
    assert!(m.read_only().is_some_and(|w| w.contains("worn out")));
    assert!(matches!(m.write(0, Some(&stamp(0, 1))), Err(FtlError::ReadOnly(_))));
    verify(&mut m);
    m.check().unwrap();
    // A format the good blocks hold is taken; one they do not, refused.
    let usable = m.usable_slots();
    let e = m.reformat(usable + 1).unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
    m.reformat(usable / 2).unwrap();
    m.write(0, Some(&stamp(0, 1))).unwrap();
    m.check().unwrap();
}

/// Read reclaim: a superblock asked for is emptied (its valid slots moved,
/// then erased, one erase older) and every LBA reads what it held; a
/// request for a superblock that is not closed is ignored.
#[test]
fn read_reclaim_moves_a_superblocks_data_and_erases_it() {
    let (mut ftl, user) = filled();
    let sb = ftl.lookup(0).unwrap().superblock;
    let erases = ftl.superblock_erase_count(sb);
    ftl.reclaim_request(sb);
    ftl.reclaim_request(sb);
    assert_eq!(ftl.reclaim_queued(), &[sb], "queued once");
    let before = ftl.counters().gc_victims;
    // Steps until the victim is erased; then there is nothing to do.
    let mut steps = 0;
    while ftl.reclaim_step(7).unwrap() > 0 {
        steps += 1;
        assert!(steps < 100_000, "reclaim ends");
    }
    assert_eq!(ftl.counters().gc_victims, before + 1);
    assert_eq!(ftl.counters().reclaim_victims, 1);
    assert!(ftl.superblock_erase_count(sb) > erases, "erased");
    let mut out = vec![0u8; SLOT_BYTES as usize];
    for lba in 0..user {
        ftl.read(lba, Some(&mut out)).unwrap();
        assert_eq!(out, stamp(lba, 1), "lba {lba}");
        assert_ne!(ftl.lookup(lba).unwrap().superblock, sb, "lba {lba} left the reclaimed superblock");
    }
    ftl.check().unwrap();
    // The open user superblock is not closed: ignored.
    ftl.write(0, Some(&stamp(0, 2))).unwrap();
    let open = ftl.lookup(0).unwrap().superblock;
    ftl.reclaim_request(open);
    assert!(!ftl.reclaiming());
    assert_eq!(ftl.reclaim_step(10).unwrap(), 0);
}
