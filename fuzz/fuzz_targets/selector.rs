//! Any text as a Kubernetes label selector: parsed or refused, never a panic; a parsed selector
//! prints as text that parses to a selector matching the same labels.
#![no_main]

use std::collections::BTreeMap;

use fleetsim::fleet::selector::Selector;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(selector) = Selector::parse(text) else { return };
    let printed = selector.to_string();
    let again = Selector::parse(&printed).unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}: {e}"));
    let samples: [BTreeMap<String, String>; 3] = [
        BTreeMap::new(),
        BTreeMap::from([("env".into(), "prod".into()), ("ring".into(), "canary".into())]),
        BTreeMap::from([("a".into(), "".into()), ("fleet.azure.com/location".into(), "eastus".into())]),
    ];
    for labels in &samples {
        assert_eq!(selector.matches(labels), again.matches(labels), "{text:?} vs {printed:?}");
    }
});
