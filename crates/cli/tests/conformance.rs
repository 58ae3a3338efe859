//! The block-device conformance suite (`testkit::conformance`) on a card
//! served over NBD: the same checks the simulated device's block API
//! passes (`crates/card/tests/conformance.rs`), through a real socket,
//! the protocol and the device thread.

mod common;

use common::Served;

/// A P420m at scale 8192 (170 MB), served with replies as soon as they
/// have run, driven once through its capacity by random requests.
#[test]
fn a_served_card_is_a_conforming_block_device() {
    let card = Served::start("conformance", &["--timing", "none"]);
    let mut client = testkit::Client::connect(&card.socket, "p420m").unwrap();
    let bytes = client.size;
    testkit::conformance::run(&mut client, bytes, 7).unwrap_or_else(|e| panic!("{e}"));
    drop(client);
    card.stop();
}
