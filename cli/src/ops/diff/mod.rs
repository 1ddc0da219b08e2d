//! `capi-ext diff`: two versions of an extension (git revisions of the project, or running
//! extensions) judged by what the head does to the Clusters that exist.
//!
//! The Clusters that exist are the base's cases (its `render/`, as deployed with it). Each is
//! rendered with the base and, as the base's webhook stored it (variables defaulted), with the
//! head: what changes, and what CAPI does with it. The cases the head itself edits, adds or
//! removes are reported apart and rendered with the head alone, so an edit of a case never
//! hides what the head does to a Cluster that runs today.
//!
//! [`cases`] reads the Clusters, [`versions`] builds or reaches each version and renders them,
//! [`variables`] compares the two DiscoverVariables, [`report`] classifies and writes.

pub mod cases;
pub mod report;
pub mod variables;
pub mod versions;

pub use cases::{Case, read_cases, read_cases_shown_as};
pub use report::{ClusterDiff, InputChange, Outcome, Renders, Report};
pub use versions::{Running, Side, Version};

use anyhow::Context;
use capi_ext::CapiVersion;
use std::path::Path;
use std::time::Duration;

/// The Clusters that exist, in a management cluster.
#[derive(Debug, Clone, Copy)]
pub struct Live<'a> {
    /// Its client.
    pub kube: &'a crate::ops::kube::Kube,
    /// Only the Clusters of this namespace.
    pub namespace: Option<&'a str>,
    /// Only the Clusters matching this label selector.
    pub selector: Option<&'a str>,
}

/// What to compare.
pub struct Request<'a> {
    /// The version deployed today.
    pub base: &'a Version,
    /// The new version.
    pub head: &'a Version,
    /// The project (for revisions and builds).
    pub project: &'a Path,
    /// The folder of cases, as the head has it.
    pub cases: &'a Path,
    /// The Clusters that exist, when they are not the base revision's copy of `cases` (e.g.
    /// the inputs `render --kubeconfig --write-inputs` read from a management cluster).
    pub base_cases: Option<&'a Path>,
    /// The Clusters that exist, read from a management cluster: every Cluster with a topology
    /// (of a namespace, or of all). The head's own cases are then not compared.
    pub live: Option<Live<'a>>,
    /// The Cluster API release to play.
    pub capi_version: Option<CapiVersion>,
    /// CRDs of the templates' kinds: both versions render with the API server's rules, and
    /// objects are compared as the API server stores them (defaults filled in).
    pub crds: Option<std::sync::Arc<capi_ext_render::apiserver::Crds>>,
    /// ExtensionConfigs served elsewhere (neither version builds them), by name: both versions
    /// call them there.
    pub other_extensions: &'a std::collections::BTreeMap<String, crate::ops::call::Target>,
    /// Seconds to wait for each call.
    pub timeout: Duration,
}

fn read(dir: &Path, shown: &Path, request: &Request) -> anyhow::Result<Vec<Case>> {
    let mut cases = read_cases_shown_as(dir, shown)?;
    for case in &mut cases {
        case.input.capi_version = request.capi_version;
        case.input.crds = request.crds.clone();
    }
    Ok(cases)
}

/// Builds or reaches both versions and judges the head against the Clusters of the base.
/// Errors (bad cases, a failed build, an unreachable extension) mean there is nothing to
/// compare.
pub fn compare(request: &Request, status: &dyn Fn(&str, &str)) -> anyhow::Result<Report> {
    let shown = cases::relative(request.cases);
    let base = Side::prepare(request.base, "base", request.project)?;
    let head = Side::prepare(request.head, "head", request.project)?;
    let mut notes = Vec::new();
    let (existing, head_cases) = match request.live {
        Some(live) => {
            // The Clusters that exist are the judge, and nothing else: each is rendered by both
            // versions as the management cluster holds it.
            let mut live = cases::live_cases(live)?;
            for case in &mut live {
                case.input.capi_version = request.capi_version;
                case.input.crds = request.crds.clone();
            }
            status(
                "Read",
                &format!(
                    "{} Clusters with a topology from the management cluster",
                    live.len()
                ),
            );
            (live.clone(), live)
        }
        None => {
            let head_dir = head
                .cases_dir(request.project, request.cases)
                .with_context(|| {
                    format!(
                        "{}: not in the head revision {}",
                        shown.display(),
                        head.name
                    )
                })?;
            let head_cases = read(&head_dir, &shown, request)?;
            let existing = match (
                request.base_cases,
                base.cases_dir(request.project, request.cases),
            ) {
                (Some(dir), _) => read(dir, &cases::relative(dir), request)?,
                (None, Some(dir)) => read(&dir, &shown, request)?,
                (None, None) => {
                    notes.push(format!(
                        "the base {} has no {}: the head's cases stand for the Clusters that exist",
                        base.name,
                        shown.display()
                    ));
                    head_cases.clone()
                }
            };
            (existing, head_cases)
        }
    };

    let base_name = base.name.clone();
    let base = base.start(
        request.project,
        request.timeout,
        request.other_extensions,
        status,
    )?;
    let base_results = base.render(existing.iter().map(|c| &c.input));
    status(
        "Rendered",
        &format!("{} Clusters with {base_name}", existing.len()),
    );
    // The Clusters as CAPI holds them: the values the base's webhook defaulted are stored.
    let stored: Vec<capi_ext_render::Input> = existing
        .iter()
        .zip(&base_results)
        .map(|(case, result)| {
            let mut input = case.input.clone();
            if let Ok(rendered) = result {
                input.cluster = rendered.cluster.clone();
            }
            input
        })
        .collect();
    let base_definitions = class_definitions(&base, &existing);
    drop(base);

    let head_name = head.name.clone();
    let head = head.start(
        request.project,
        request.timeout,
        request.other_extensions,
        status,
    )?;
    let head_results = head.render(&stored);
    status(
        "Rendered",
        &format!("{} Clusters with {head_name}", existing.len()),
    );
    let head_definitions = class_definitions(&head, &existing);

    let mut inputs = Vec::new();
    for case in &head_cases {
        let before = existing
            .iter()
            .position(|e| e.key == case.key && e.cluster == case.cluster);
        let kind = match before {
            None => "added",
            Some(i) if !existing[i].same_inputs(case) => "changed",
            Some(_) => continue,
        };
        let result = head.render([&case.input]).remove(0);
        // What the edit itself does: the Cluster as it runs and as edited, both with the head.
        let changes = match (before.map(|i| &head_results[i]), &result) {
            (Some(Ok(running)), Ok(edited)) => capi_ext_render::change::compare(running, edited),
            _ => Vec::new(),
        };
        inputs.push(InputChange {
            cluster: case.cluster.clone(),
            file: case.file.clone(),
            kind,
            head: Some(result.map(|_| ()).map_err(|e| e.to_string())),
            changes,
        });
    }
    for case in &existing {
        if !head_cases
            .iter()
            .any(|h| h.key == case.key && h.cluster == case.cluster)
        {
            inputs.push(InputChange {
                cluster: case.cluster.clone(),
                file: case.file.clone(),
                kind: "removed",
                head: None,
                changes: Vec::new(),
            });
        }
    }

    let mut variable_changes = Vec::new();
    for ((class, base_defs), (_, head_defs)) in base_definitions.iter().zip(&head_definitions) {
        let (Some(base_defs), Some(head_defs)) = (base_defs, head_defs) else {
            continue;
        };
        let clusters: Vec<(String, &serde_json::Value)> = existing
            .iter()
            .zip(&stored)
            .filter(|(case, _)| &case.class() == class)
            .map(|(case, input)| (case.cluster.clone(), &input.cluster))
            .collect();
        variable_changes.extend(variables::changes(class, base_defs, head_defs, &clusters));
    }

    let mut report = Report::new(
        &existing,
        Renders {
            version: base_name,
            results: base_results,
        },
        Renders {
            version: head_name,
            results: head_results,
        },
    );
    report.inputs = inputs;
    report.variables = variable_changes;
    report.notes = notes;
    Ok(report)
}

/// Each ClusterClass of the cases (`namespace/name`, once) with the variable definitions a
/// version gives it (`None` when its DiscoverVariables fails: the render says why).
fn class_definitions(
    running: &Running,
    cases: &[Case],
) -> Vec<(String, Option<Vec<capi_ext_render::Definition>>)> {
    let mut out: Vec<(String, Option<Vec<capi_ext_render::Definition>>)> = Vec::new();
    for case in cases {
        let class = case.class();
        if out.iter().any(|(c, _)| c == &class) {
            continue;
        }
        out.push((class, running.definitions(&case.input).ok()));
    }
    out
}
