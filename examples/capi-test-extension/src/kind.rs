//! Cluster API's kind mapper (test module `infrastructure/kind/mapper.go`): the kindest/node
//! image for a Kubernetes version, and the versions it knows. The table is Cluster API's,
//! generated into [`images`] by `scripts/update-kind-images.sh`.

#[rustfmt::skip]
mod images;

use crate::semver::Version;
use std::sync::LazyLock;

pub use images::{LATEST_MODE, PRE_BUILT};

fn mapped(entry: &(&str, &str, &str)) -> Version {
    Version::parse(entry.0).expect("the kind mapper's versions parse")
}

/// [`PRE_BUILT`]'s versions, parsed once (every GeneratePatches call looks images up).
static PRE_BUILT_VERSIONS: LazyLock<Vec<Version>> =
    LazyLock::new(|| PRE_BUILT.iter().map(mapped).collect());

/// `kind.GetMapping(version, "").Image`: the pre-built image of that exact version, else
/// `kindest/node:v<version>` (the characters an OCI tag refuses replaced by `_`).
pub fn image(version: &Version) -> String {
    for (entry, known) in PRE_BUILT.iter().zip(PRE_BUILT_VERSIONS.iter()) {
        if (known.major, known.minor) != (version.major, version.minor) {
            continue;
        }
        if known.patch == version.patch && version.pre.is_empty() {
            return entry.2.to_string();
        }
        if version.patch > known.patch {
            break;
        }
    }
    let tag: String = format!("v{version}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("kindest/node:{tag}")
}

/// `kind.GetKubernetesVersions()`: the versions of the newest kind mode, sorted, `v`-prefixed.
pub fn kubernetes_versions() -> Vec<String> {
    let mut versions: Vec<Version> = Vec::new();
    for entry in PRE_BUILT.iter().filter(|e| e.1 == LATEST_MODE) {
        let version = mapped(entry);
        if !versions
            .iter()
            .any(|v| v.to_string() == version.to_string())
        {
            versions.push(version);
        }
    }
    versions.sort_by(Version::compare);
    versions.iter().map(|v| format!("v{v}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse_tolerant(s).unwrap()
    }

    #[test]
    fn a_known_version_gets_its_pinned_image_and_others_a_tag() {
        assert!(image(&v("v1.36.4")).starts_with("kindest/node:v1.36.4@sha256:"));
        // Newer than any published patch: the best guess, without a digest.
        assert_eq!(image(&v("v1.36.99")), "kindest/node:v1.36.99");
        // A pre-release or a build is never the pinned image; `+` is not allowed in a tag.
        assert_eq!(image(&v("v1.36.4-rc.1")), "kindest/node:v1.36.4-rc.1");
        assert_eq!(image(&v("v1.36.4+build")), image(&v("v1.36.4")));
        assert_eq!(image(&v("v1.99.0+build")), "kindest/node:v1.99.0_build");
    }

    #[test]
    fn the_versions_are_sorted_and_of_the_latest_mode() {
        let versions = kubernetes_versions();
        assert!(versions.len() > 10, "{versions:?}");
        let parsed: Vec<Version> = versions.iter().map(|s| v(s)).collect();
        assert!(parsed.windows(2).all(|w| w[0].compare(&w[1]).is_lt()));
    }
}
