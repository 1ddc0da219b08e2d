//! Versioned GeneratePatches handlers (`capi-ext create hook GeneratePatches --next-version-of
//! NAME`): a new handler `NAME-vN` starts as a copy of the newest version, the generated
//! ClusterClass patch stanza points at it, and the project's render case is kept, still naming
//! the old handler, as `render/NAME/`, so `capi-ext diff` shows that the ClusterClasses which
//! run today are untouched while the new version changes.

use crate::ops::files::{FileChange, Owner};
use crate::ops::project::{HandlerEntry, Metadata, module_name};
use anyhow::{anyhow, bail};
use std::path::{Path, PathBuf};

/// The render inputs kept for the old version (the render output is not: `diff` renders).
const RENDER_INPUTS: [&str; 4] = [
    "cluster.yaml",
    "clusterclass.yaml",
    "templates.yaml",
    "extensionconfig.yaml",
];

/// `NAME` without a `-vN` suffix, and N (1 without one).
fn split_version(name: &str) -> (&str, u32) {
    name.rsplit_once("-v")
        .and_then(|(base, n)| n.parse::<u32>().ok().filter(|n| *n >= 2).map(|n| (base, n)))
        .unwrap_or((name, 1))
}

/// The handler `of` must be a GeneratePatches handler of the project; the next version's name
/// is its base name with `-vN`, N one more than the newest version there is.
pub fn next_name<'a>(meta: &'a Metadata, of: &str) -> anyhow::Result<(&'a HandlerEntry, String)> {
    let generate: Vec<&HandlerEntry> = meta
        .handlers
        .iter()
        .filter(|h| h.hook == "GeneratePatches")
        .collect();
    let Some(entry) = generate.iter().find(|h| h.name == of) else {
        bail!(
            "--next-version-of {of}: no GeneratePatches handler of that name (the project has {})",
            if generate.is_empty() {
                "none".to_string()
            } else {
                generate
                    .iter()
                    .map(|h| h.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
    };
    let (base, _) = split_version(of);
    let newest = generate
        .iter()
        .filter_map(|h| match split_version(&h.name) {
            (b, n) if b == base => Some(n),
            _ => None,
        })
        .max()
        .unwrap_or(1);
    Ok((entry, format!("{base}-v{}", newest + 1)))
}

/// The handler file of `of`, renamed to `new`: its handler name, function, test constants and
/// docs; the patches it lists stay the same (shared modules: change one for the new version
/// only by giving the new version a patch of its own).
pub fn copy_handler(text: &str, of: &HandlerEntry, new: &str) -> String {
    let new_module = module_name(new);
    let renamed = text
        .replace(&format!("\"{}\"", of.name), &format!("\"{new}\""))
        .replace(&format!("`{}`", of.name), &format!("`{new}`"));
    // The function (and its uses) by whole word.
    let mut out = String::with_capacity(renamed.len());
    let mut rest = renamed.as_str();
    while let Some(at) = rest.find(&of.module) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + of.module.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        if word(before) || word(after) {
            out.push_str(&of.module);
        } else {
            out.push_str(&new_module);
        }
        rest = &rest[at + of.module.len()..];
    }
    out.push_str(rest);
    let note = format!(
        "//! The next version of `{}`, which keeps serving the ClusterClasses that name it; new\n//! ClusterClasses name this one (the generated patch stanza does). Change the patches here,\n//! not in the modules both versions list: `capi-ext diff` shows what each version does.\n",
        of.name
    );
    match out.split_once('\n') {
        Some((first, body)) if first.starts_with("//!") => format!("{first}\n//!\n{note}{body}"),
        _ => format!("{note}\n{out}"),
    }
}

/// The project's render inputs copied to `render/<of>/` as user files (kept as they are: the
/// ClusterClass there still names `of`), unless that folder exists.
pub fn keep_render_case(root: &Path, of: &str) -> anyhow::Result<Vec<FileChange>> {
    let dir = PathBuf::from("render").join(of);
    if root.join(&dir).exists() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for file in RENDER_INPUTS {
        let from = root.join("render").join(file);
        if !from.is_file() {
            continue;
        }
        out.push(FileChange {
            path: dir.join(file),
            content: std::fs::read_to_string(&from)
                .map_err(|e| anyhow!("reading {}: {e}", from.display()))?,
            owner: Owner::User,
        });
    }
    Ok(out)
}

/// Of the handlers of a hook (name, in order), the newest version of the first: `NAME-vN`
/// with the largest N, else the first.
pub fn newest<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let names: Vec<&str> = names.into_iter().collect();
    let first = *names.first()?;
    let (base, _) = split_version(first);
    names
        .iter()
        .filter(|n| split_version(n).0 == base)
        .max_by_key(|n| split_version(n).1)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> HandlerEntry {
        HandlerEntry {
            name: name.into(),
            hook: "GeneratePatches".into(),
            module: module_name(name),
        }
    }

    #[test]
    fn names_count_up_from_the_newest_version() {
        let mut meta = Metadata {
            name: "x".into(),
            namespace: "x".into(),
            capi_version: "1.14".into(),
            cli_version: "0".into(),
            handlers: vec![entry("patches")],
            kube: false,
        };
        assert_eq!(next_name(&meta, "patches").unwrap().1, "patches-v2");
        meta.handlers.push(entry("patches-v2"));
        meta.handlers.push(entry("patches-v3"));
        assert_eq!(next_name(&meta, "patches").unwrap().1, "patches-v4");
        assert_eq!(next_name(&meta, "patches-v2").unwrap().1, "patches-v4");
        let err = next_name(&meta, "nope").unwrap_err().to_string();
        assert!(
            err.contains("no GeneratePatches handler of that name (the project has patches, patches-v2, patches-v3)"),
            "{err}"
        );
        assert_eq!(
            newest(["patches", "other", "patches-v3", "patches-v2"]),
            Some("patches-v3")
        );
        assert_eq!(newest(["a-v1x", "b"]), Some("a-v1x"));
        assert_eq!(newest([]), None);
    }

    #[test]
    fn the_copy_renames_the_handler_and_says_what_it_is() {
        let text = "//! The `generate-patches` handler: GeneratePatches.\n\n#[hook(GeneratePatches, name = \"generate-patches\")]\npub async fn generate_patches(req: R) -> S {\n    patches().generate(&req)\n}\nconst NAME: &str = \"generate-patches\";\nfn t() { b.register::<generate_patches>(); generate_patches_other(); }\n";
        let copy = copy_handler(text, &entry("generate-patches"), "generate-patches-v2");
        assert!(copy.starts_with("//! The `generate-patches-v2` handler: GeneratePatches.\n//!\n//! The next version of `generate-patches`"), "{copy}");
        assert!(
            copy.contains("name = \"generate-patches-v2\")]\npub async fn generate_patches_v2("),
            "{copy}"
        );
        assert!(
            copy.contains("const NAME: &str = \"generate-patches-v2\";"),
            "{copy}"
        );
        assert!(
            copy.contains("register::<generate_patches_v2>(); generate_patches_other();"),
            "{copy}"
        );
    }
}
