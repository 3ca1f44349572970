//! Any bytes as a sweep file (its base scenario inline, or a path that does not exist): a plan or
//! problems with RFC 6901 pointers; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let base = std::path::Path::new("/nonexistent");
    if let Err(problems) = fleetsim::sweep::plan::from_text(text, "sweep.json", base) {
        for p in problems {
            assert!(fleetsim::scenario::problem::is_pointer(&p.path), "{p:?}");
            assert!(!p.to_string().chars().any(char::is_control), "{p:?}");
        }
    }
});
