//! `capi-ext generate release`: what clusterctl expects of a runtime extension provider, from
//! the project's `config/default` built by kustomize: `components.yaml` (every object, the image
//! set to the released one) and `metadata.yaml` (the release series and the contract), laid out
//! as a clusterctl local repository, `<output>/runtime-extension-<name>/<version>/`. The same two
//! files are the assets of a release clusterctl downloads.

use super::files::{FileChange, Owner};
use super::project::Metadata;
use anyhow::{Context, anyhow, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to release.
#[derive(Debug, Clone)]
pub struct Release {
    /// The version, `vMAJOR.MINOR.PATCH` (clusterctl reads it as semantic versioning).
    pub version: String,
    /// The image of the release, `REGISTRY/REPOSITORY:TAG`.
    pub image: String,
    /// The kustomize command.
    pub kustomize: PathBuf,
    /// The local repository's root, relative to the project.
    pub output: PathBuf,
}

/// The provider label clusterctl gives a runtime extension provider (`ManifestLabel`).
pub fn provider_label(name: &str) -> String {
    format!("runtime-extension-{name}")
}

/// `(major, minor)` of a `vMAJOR.MINOR.PATCH[-pre]` version, or an error saying what is wrong.
pub fn release_series(version: &str) -> anyhow::Result<(u64, u64)> {
    let bad = || {
        anyhow!(
            "--version `{version}`: clusterctl needs a semantic version with a leading v, like v0.1.0"
        )
    };
    let core = version
        .strip_prefix('v')
        .ok_or_else(bad)?
        .split(['-', '+'])
        .next()
        .unwrap_or_default();
    let parts: Vec<u64> = core
        .split('.')
        .map(|p| p.parse().map_err(|_| bad()))
        .collect::<anyhow::Result<_>>()?;
    match parts.as_slice() {
        [major, minor, _patch] => Ok((*major, *minor)),
        _ => Err(bad()),
    }
}

/// Runs `kustomize build config/default` in the project.
fn kustomize_build(root: &Path, kustomize: &Path) -> anyhow::Result<String> {
    let dir = root.join("config").join("default");
    let out = Command::new(kustomize)
        .arg("build")
        .arg(&dir)
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                anyhow!(
                    "`{}` was not found: install kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) or name it with --kustomize PATH",
                    kustomize.display()
                )
            } else {
                anyhow!("running `{}`: {e}", kustomize.display())
            }
        })?;
    if !out.status.success() {
        bail!(
            "`{} build {}` failed: {}",
            kustomize.display(),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    String::from_utf8(out.stdout).context("kustomize printed something that is not UTF-8")
}

/// Refuses an image name clusterctl would refuse: it parses images as canonical references, so a
/// name needs a registry (a first part with a `.` or `:`, or `localhost`) and a tag or digest.
fn check_image(image: &str) -> anyhow::Result<()> {
    let (name, tagged) = match image.rsplit_once('@') {
        Some((name, _digest)) => (name, true),
        None => match image.rsplit_once(':') {
            Some((name, tag)) if !tag.contains('/') => (name, true),
            _ => (image, false),
        },
    };
    let registry = name.split_once('/').map(|(first, _)| first);
    let canonical =
        registry.is_some_and(|r| r.contains('.') || r.contains(':') || r == "localhost");
    if !canonical || !tagged || name != name.to_lowercase() {
        bail!(
            "--image `{image}`: clusterctl needs a canonical image reference, with a registry and a tag, like registry.example.com/team/extension:v0.1.0"
        );
    }
    Ok(())
}

/// Sets the image of the Deployment's `extension` container.
fn set_image(objects: &mut [Value], image: &str) -> anyhow::Result<()> {
    let mut set = 0;
    for object in objects.iter_mut().filter(|o| o["kind"] == "Deployment") {
        if let Some(containers) = object
            .pointer_mut("/spec/template/spec/containers")
            .and_then(Value::as_array_mut)
        {
            for c in containers.iter_mut().filter(|c| c["name"] == "extension") {
                c["image"] = Value::String(image.to_string());
                set += 1;
            }
        }
    }
    if set == 0 {
        bail!(
            "--image: config/default has no Deployment with a container named `extension` to set it on"
        );
    }
    Ok(())
}

/// The release's files: `components.yaml` and `metadata.yaml`.
pub fn files(root: &Path, meta: &Metadata, release: &Release) -> anyhow::Result<Vec<FileChange>> {
    let (major, minor) = release_series(&release.version)?;
    let built = kustomize_build(root, &release.kustomize)?;
    let mut objects: Vec<Value> = serde_saphyr::from_multiple(&built)
        .map_err(|e| anyhow!("kustomize printed YAML that does not parse: {e}"))?;
    objects.retain(|o| !o.is_null());
    if !objects.iter().any(|o| o["kind"] == "Namespace") {
        bail!("config/default has no Namespace: clusterctl takes the provider's namespace from it");
    }
    check_image(&release.image)?;
    set_image(&mut objects, &release.image)?;
    let dir = release
        .output
        .join(provider_label(&meta.name))
        .join(&release.version);
    let components = format!(
        "# {name} {version}, from `kustomize build config/default` (`capi-ext generate release`).\n{}",
        super::render::yaml_stream(&objects)?,
        name = meta.name,
        version = release.version,
    );
    let metadata = format!(
        "# clusterctl's metadata of {name} (`capi-ext generate release`): the release series and the\n\
         # Cluster API contract it works with.\n\
         apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\n\
         kind: Metadata\n\
         releaseSeries:\n\
         - major: {major}\n  minor: {minor}\n  contract: v1beta2\n",
        name = meta.name,
    );
    Ok(vec![
        FileChange {
            path: dir.join("components.yaml"),
            content: components,
            owner: Owner::Generated,
        },
        FileChange {
            path: dir.join("metadata.yaml"),
            content: metadata,
            owner: Owner::Generated,
        },
    ])
}

/// The clusterctl configuration that makes the local repository a provider.
pub fn clusterctl_config(root: &Path, meta: &Metadata, release: &Release) -> String {
    let components = root
        .join(&release.output)
        .join(provider_label(&meta.name))
        .join(&release.version)
        .join("components.yaml");
    let components = std::fs::canonicalize(&components).unwrap_or(components);
    format!(
        "# clusterctl configuration (e.g. ~/.config/cluster-api/clusterctl.yaml, or --config FILE):\n\
         providers:\n\
         - name: {name}\n  url: file://{path}\n  type: RuntimeExtensionProvider\n\
         # then: clusterctl init --runtime-extension {name}:{version}\n\
         #   or: clusterctl generate provider --runtime-extension {name}:{version}\n",
        name = meta.name,
        path = components.display(),
        version = release.version,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_are_semantic_with_a_v() {
        assert_eq!(release_series("v0.1.0").unwrap(), (0, 1));
        assert_eq!(release_series("v2.13.4-rc.1").unwrap(), (2, 13));
        for bad in ["0.1.0", "v1.2", "v1.x.0", "v1.2.3.4", ""] {
            let e = release_series(bad).unwrap_err().to_string();
            assert!(e.contains("like v0.1.0"), "{bad}: {e}");
        }
    }

    #[test]
    fn images_must_be_canonical() {
        for good in [
            "registry.example.com/x:v0.1.0",
            "localhost/x:dev",
            "127.0.0.1:5000/team/x:v1",
            "ghcr.io/o/x@sha256:0123",
        ] {
            check_image(good).unwrap();
        }
        for bad in [
            "x:dev",
            "team/x:v1",
            "registry.example.com/x",
            "Registry.io/X:v1",
        ] {
            let e = check_image(bad).unwrap_err().to_string();
            assert!(e.contains("canonical image reference"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_image_goes_to_the_extension_container() {
        let mut objects = vec![
            json!({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
            {"name": "extension", "image": "x:dev"}, {"name": "sidecar", "image": "s"}]}}}}),
        ];
        set_image(&mut objects, "registry.example.com/x:v0.1.0").unwrap();
        assert_eq!(
            objects[0]["spec"]["template"]["spec"]["containers"][0]["image"],
            "registry.example.com/x:v0.1.0"
        );
        assert_eq!(
            objects[0]["spec"]["template"]["spec"]["containers"][1]["image"],
            "s"
        );
        let e = set_image(&mut [json!({"kind": "Service"})], "x").unwrap_err();
        assert!(e.to_string().contains("container named `extension`"));
    }
}
