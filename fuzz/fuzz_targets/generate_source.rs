//! The static source reader of `capi-ext generate`: registrations, `#[hook]` attributes and
//! `Variables` types read from Rust source without compiling it.

use capi_ext_codegen::model::{project, static_schema};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let sources = [("src/main.rs".to_string(), text.to_string())];
        let _ = project::read(&sources);
        let _ = static_schema::variables(&sources);
    });
}
