//! `skillgate.toml` text: the config parser, then the seccomp and network layers it
//! describes are built (presets by name; files it names are read).
//! Seeds: `examples/skillgate.toml` and the configs in the CLI's tests.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = skillgate::config::from_str(text, "fuzz.toml") {
        let _ = config.seccomp.build_layer();
        let _ = config.network.build_layer();
    }
});
