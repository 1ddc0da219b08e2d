//! Compile-fail goldens: what a typed template refuses at compile time
//! (`TRYBUILD=overwrite` rewrites the `.stderr` files; `scripts/bless.sh` does).

#[cfg(feature = "kubeadm")]
#[test]
fn misspelled_fields_do_not_compile() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
