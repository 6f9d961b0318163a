//! What a session reads back from its store: arbitrary bytes as a stored event's payload
//! (the path `store::event_from` reads) and as a snapshot archive (`snapshot::read_file`
//! with a cap, and `snapshot::unpack` into a temporary workspace that is removed after).
//! An event that reads re-encodes to itself; an archive, whether it unpacks or not,
//! writes nothing outside the workspace (no `..`, absolute path, symbolic or hard link
//! escaping), leaves nothing beyond the permission bits, and a tree it unpacked to packs
//! and restores again (see `skillgate_session::fuzz::session_log`).
//! Seeds: `corpora/fuzz-seeds/session_log/` (real event payloads, a real snapshot and
//! hostile archives, written by `cargo run -p skillgate-session --example fuzz_seeds`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skillgate_session::fuzz::session_log(data);
});
