//! The types come from the Cluster API release render carries the CRDs of.

#[test]
fn the_types_come_from_the_release_of_the_built_in_crds() {
    let here = env!("CARGO_MANIFEST_DIR");
    let version = std::fs::read_to_string(format!("{here}/src/CAPI_VERSION")).unwrap();
    let built_in = std::fs::read_to_string(format!("{here}/../render/crds/README.md")).unwrap();
    assert!(
        built_in.contains(version.trim()),
        "types/src/CAPI_VERSION says {}; regenerate with scripts/update-types.sh",
        version.trim()
    );
}
