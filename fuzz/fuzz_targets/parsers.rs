//! One libFuzzer target for every parser of `spsa::fuzz`: `SPSA_FUZZ_TARGET` names it
//! (`cargo run --features fuzzing --example fuzz_parsers -- --list`). A panic is libFuzzer's crash; a refusal
//! that does not name its file is not checked here (`scripts/fuzz.sh` checks it).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

static TARGET: OnceLock<spsa::fuzz::Target> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let target = TARGET.get_or_init(|| {
        let name = std::env::var("SPSA_FUZZ_TARGET").expect("SPSA_FUZZ_TARGET names a parser");
        spsa::fuzz::all()
            .into_iter()
            .find(|t| t.name == name)
            .expect("no such parser")
    });
    let _ = (target.parse)(data);
});
