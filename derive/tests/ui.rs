//! Compile-time behaviour of the macros: what compiles, and the exact error (on the user's
//! span, one per mistake) for what does not. Regenerate the `.stderr` goldens with
//! `TRYBUILD=overwrite cargo test -p capi-ext-derive --test ui` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for m in ["hook", "variables", "schema"] {
        t.pass(format!("tests/ui/{m}/pass/*.rs"));
        t.compile_fail(format!("tests/ui/{m}/fail/*.rs"));
    }
}
