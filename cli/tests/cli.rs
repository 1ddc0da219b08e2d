//! `--help`, `--version` and completions transcripts (they double as the CLI reference).
//! Regenerate with `TRYCMD=overwrite cargo test -p capi-ext-cli --test cli`.

#[test]
fn transcripts() {
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}
