//! Any bytes as a scenario file: a valid scenario, or problems each with an RFC 6901 pointer and one
//! line of text; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(problems) = fleetsim::scenario::parse_str(text, None) {
        assert!(!problems.is_empty());
        for p in problems {
            assert!(fleetsim::scenario::problem::is_pointer(&p.path), "{p:?}");
            assert!(!p.to_string().chars().any(char::is_control), "{p:?}");
        }
    }
});
