//! What the head does to each Cluster, classified by CAPI's rules, and the report for people
//! and for tools.

use super::cases::Case;
use super::variables::VariableChange;
use capi_ext_render::change::{ObjectChange, Rollout, compare};
use capi_ext_render::{RenderError, Rendered};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Every case rendered by one version.
#[derive(Debug)]
pub struct Renders {
    /// The version, as the user named it (a revision with its commit).
    pub version: String,
    /// One result per case, in order.
    pub results: Vec<Result<Rendered, RenderError>>,
}

/// What a new version does to one Cluster.
#[derive(Debug)]
pub enum Outcome {
    /// The same objects.
    Unchanged,
    /// These objects change.
    Changed(Vec<ObjectChange>),
    /// It rendered with the base and does not with the head: CAPI's reconcile of the Cluster
    /// would fail (or the Cluster would be rejected).
    Breaks(String),
    /// It did not render with the base and does with the head.
    Fixed(String),
    /// The base does not serve a handler its ClusterClass calls (HTTP 404), the head does: a
    /// new handler (a new version of one), which no running Cluster calls yet.
    New(String),
    /// It renders with neither: the case itself is wrong.
    Fails(String),
}

/// One Cluster's result.
#[derive(Debug)]
pub struct ClusterDiff {
    /// `namespace/name`.
    pub cluster: String,
    /// Where it is.
    pub file: PathBuf,
    /// What happens to it.
    pub outcome: Outcome,
    /// What the head's render warns about (metadata the targeted CAPI drops).
    pub warnings: Vec<String>,
}

impl ClusterDiff {
    /// The strongest rollout of its changes.
    pub fn rollout(&self) -> Rollout {
        match &self.outcome {
            Outcome::Changed(changes) => strongest(changes),
            _ => Rollout::No,
        }
    }

    /// What replaces Machines, each once (`MachineDeployment md-0`, `the control plane`).
    pub fn rolls_out(&self) -> Vec<String> {
        match &self.outcome {
            Outcome::Changed(changes) => rolling(changes),
            _ => Vec::new(),
        }
    }
}

/// A case that differs between the base and the head (its Cluster, ClusterClass, templates
/// or settings edited, added or removed): reported on its own, rendered with the head alone,
/// never in place of what the head does to the Clusters that exist.
#[derive(Debug)]
pub struct InputChange {
    /// `namespace/name`.
    pub cluster: String,
    /// Where it is (in the head; in the base when removed).
    pub file: PathBuf,
    /// `added`, `changed` or `removed`.
    pub kind: &'static str,
    /// What the head's own case gives with the head (`None` for a removed case).
    pub head: Option<Result<(), String>>,
    /// For a changed case that renders as it runs and as edited (both with the head): what the
    /// edit does to the Cluster's objects, by CAPI's rules.
    pub changes: Vec<ObjectChange>,
}

impl InputChange {
    /// The strongest rollout the edit makes.
    pub fn rollout(&self) -> Rollout {
        strongest(&self.changes)
    }
}

/// The strongest rollout of these changes.
fn strongest(changes: &[ObjectChange]) -> Rollout {
    changes
        .iter()
        .map(ObjectChange::rollout)
        .max()
        .unwrap_or(Rollout::No)
}

/// How long CAPI's topology controller keeps a GenerateUpgradePlan answer
/// (`core/reconcilers/topology/cluster/cluster_controller.go`: `cache.New` with 10 minutes),
/// keyed by the Cluster and the request's three versions, not by the extension.
const PLAN_CACHE_MINUTES: u32 = 10;

/// The versions of one list of a GenerateUpgradePlan answer (`controlPlaneUpgrades`,
/// `workersUpgrades`), as CAPI reads them.
fn plan_steps(response: &Value, list: &str) -> Vec<String> {
    response[list]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .map(|step| step["version"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// A warning when the head answers the Cluster's GenerateUpgradePlan otherwise than the base:
/// CAPI keeps the running build's answer for this Cluster and these versions until its cache
/// entry expires, so the head's plan, and what the report shows of it, takes effect only then.
fn plan_changed(before: &Rendered, after: &Rendered) -> Option<String> {
    fn plan(r: &Rendered) -> Option<(&String, &Value)> {
        r.exchanges
            .iter()
            .find(|e| e.hook == "GenerateUpgradePlan")
            .map(|e| (&e.handler, &e.response))
    }
    let ((_, base), (handler, head)) = (plan(before)?, plan(after)?);
    let shown = |steps: &[String]| {
        if steps.is_empty() {
            "none (CAPI's default)".to_string()
        } else {
            steps.join(", ")
        }
    };
    let differs: Vec<String> = [
        ("controlPlaneUpgrades", "control plane"),
        ("workersUpgrades", "workers"),
    ]
    .into_iter()
    .filter_map(|(list, what)| {
        let (b, h) = (plan_steps(base, list), plan_steps(head, list));
        (b != h).then(|| format!("{what} {} → {}", shown(&b), shown(&h)))
    })
    .collect();
    if differs.is_empty() {
        return None;
    }
    Some(format!(
        "the head plans its upgrade otherwise (GenerateUpgradePlan `{handler}`: {}); CAPI keeps an answer for {PLAN_CACHE_MINUTES} minutes by Cluster and versions, not by build: if it asked the running build less than {PLAN_CACHE_MINUTES} minutes ago, the Cluster follows the base's plan until then, not what this report shows for the head",
        differs.join("; ")
    ))
}

/// What replaces Machines, each once (`MachineDeployment md-0`, `the control plane`).
fn rolling(changes: &[ObjectChange]) -> Vec<String> {
    let mut out: Vec<String> = changes.iter().filter_map(|c| c.rolls_out()).collect();
    out.dedup();
    out
}

/// The whole comparison.
#[derive(Debug)]
pub struct Report {
    /// The base version's name.
    pub base: String,
    /// The head version's name.
    pub head: String,
    /// One entry per Cluster that exists: the base's cases, rendered with the base and with
    /// the head (for the head, the Cluster as the base's webhook stored it).
    pub clusters: Vec<ClusterDiff>,
    /// The cases the head edits, adds or removes.
    pub inputs: Vec<InputChange>,
    /// The variables whose definitions differ between the base and the head.
    pub variables: Vec<VariableChange>,
    /// What the user should know about how the comparison was made.
    pub notes: Vec<String>,
}

impl Report {
    /// Compares the renders of each case (the same cases, rendered by the base and the head).
    pub fn new(cases: &[Case], base: Renders, head: Renders) -> Self {
        let clusters = cases
            .iter()
            .zip(base.results)
            .zip(head.results)
            .map(|((case, before), after)| ClusterDiff {
                cluster: case.cluster.clone(),
                file: case.file.clone(),
                warnings: {
                    let mut warnings = after
                        .as_ref()
                        .map(|r| r.warnings.clone())
                        .unwrap_or_default();
                    if let (Ok(before), Ok(after)) = (&before, &after) {
                        warnings.extend(plan_changed(before, after));
                    }
                    warnings
                },
                outcome: match (before, after) {
                    (Ok(before), Ok(after)) => {
                        let changes = compare(&before, &after);
                        if changes.is_empty() {
                            Outcome::Unchanged
                        } else {
                            Outcome::Changed(changes)
                        }
                    }
                    (Ok(_), Err(e)) => Outcome::Breaks(breaks(case, &e)),
                    (Err(e), Ok(_)) if not_served(&e) => Outcome::New(e.to_string()),
                    (Err(e), Ok(_)) => Outcome::Fixed(e.to_string()),
                    (Err(_), Err(e)) => Outcome::Fails(e.to_string()),
                },
            })
            .collect();
        Report {
            base: base.version,
            head: head.version,
            clusters,
            inputs: Vec::new(),
            variables: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// 2 when a case renders with neither version; 1 when a Cluster breaks, Machines would (or
    /// may) be replaced (by the head, or by an edit of a case) and that was not allowed, or a
    /// case the head edits or adds does not render with the head; else 0.
    pub fn exit_code(&self, allow_rollout: bool) -> u8 {
        let any = |f: &dyn Fn(&ClusterDiff) -> bool| self.clusters.iter().any(f);
        if any(&|c| matches!(c.outcome, Outcome::Fails(_))) {
            2
        } else if any(&|c| matches!(c.outcome, Outcome::Breaks(_)))
            || (!allow_rollout && any(&|c| c.rollout() != Rollout::No))
            || (!allow_rollout && self.inputs.iter().any(|i| i.rollout() != Rollout::No))
            || self.inputs.iter().any(|i| matches!(i.head, Some(Err(_))))
        {
            1
        } else {
            0
        }
    }

    /// The report for people: per Cluster what changes, why and what CAPI does, then a summary.
    pub fn human(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Comparing {} (base) with {} (head)",
            self.base, self.head
        );
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        for cluster in &self.clusters {
            let at = format!("Cluster {} ({})", cluster.cluster, cluster.file.display());
            for warning in &cluster.warnings {
                let _ = writeln!(out, "\nwarning: Cluster {}: {warning}", cluster.cluster);
            }
            match &cluster.outcome {
                Outcome::Unchanged => {
                    let _ = writeln!(out, "\n{at}: unchanged");
                }
                Outcome::Breaks(e) => {
                    let _ = writeln!(
                        out,
                        "\n{at}: BREAKS: rendered with the base, fails with the head (CAPI's reconcile of it would fail):\n  {e}"
                    );
                }
                Outcome::Fixed(e) => {
                    let _ = writeln!(
                        out,
                        "\n{at}: fixed: failed with the base, renders with the head (it failed with: {e})"
                    );
                }
                Outcome::Fails(e) => {
                    let _ = writeln!(out, "\n{at}: renders with neither version:\n  {e}");
                }
                Outcome::New(e) => {
                    let _ = writeln!(
                        out,
                        "\n{at}: new: its ClusterClass calls a handler only the head serves, so no Cluster runs it yet (the base answered: {e})"
                    );
                }
                Outcome::Changed(changes) => {
                    let _ = write!(out, "\n{at}: {}", changes_text(changes));
                }
            }
        }
        if !self.variables.is_empty() {
            let _ = writeln!(
                out,
                "\nVariables: the head's DiscoverVariables differs from the base's"
            );
            for change in &self.variables {
                let _ = writeln!(
                    out,
                    "  {} `{}` (ClusterClass {}): {}{}",
                    change.kind,
                    change.variable,
                    change.class,
                    change.meaning,
                    if change.clusters.is_empty() {
                        String::new()
                    } else {
                        format!("\n    Clusters: {}", change.clusters.join(", "))
                    }
                );
            }
        }
        if !self.inputs.is_empty() {
            let _ = writeln!(
                out,
                "\nInputs changed: cases the head edits, adds or removes, rendered with the head alone (the Clusters above are judged as the base has them)"
            );
            for input in &self.inputs {
                let result = match &input.head {
                    None => "no longer a case; the Cluster that exists is judged above".to_string(),
                    Some(Ok(())) if input.kind == "changed" && input.changes.is_empty() => {
                        "renders with the head; the edit changes no object".to_string()
                    }
                    Some(Ok(())) if input.kind == "changed" => format!(
                        "renders with the head; what the edit does (the Cluster as it runs and as edited, both rendered with the head): {}",
                        changes_text(&input.changes)
                    ),
                    Some(Ok(())) => "renders with the head".to_string(),
                    Some(Err(e)) => format!("FAILS with the head:\n    {e}"),
                };
                let _ = writeln!(
                    out,
                    "  Cluster {} ({}): {}; {}",
                    input.cluster,
                    input.file.display(),
                    input.kind,
                    result.trim_end()
                );
            }
        }
        let count =
            |f: &dyn Fn(&ClusterDiff) -> bool| self.clusters.iter().filter(|c| f(c)).count();
        let changed = count(&|c| matches!(c.outcome, Outcome::Changed(_)));
        let breaks = count(&|c| matches!(c.outcome, Outcome::Breaks(_)));
        let rolling_clusters: Vec<String> = self
            .clusters
            .iter()
            .filter(|c| c.rollout() != Rollout::No)
            .map(|c| format!("{} ({})", c.cluster, c.rolls_out().join(", ")))
            .collect();
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let may = self
            .clusters
            .iter()
            .any(|c| c.rollout() == Rollout::ProviderDecides);
        let _ = writeln!(
            out,
            "\nSummary: {}: {changed} changed, {breaks} broken; Machines {} in {}{}",
            plural(self.clusters.len(), "Cluster"),
            if may {
                "replaced (or maybe)"
            } else {
                "replaced"
            },
            plural(rolling_clusters.len(), "Cluster"),
            if rolling_clusters.is_empty() {
                String::new()
            } else {
                format!(": {}", rolling_clusters.join("; "))
            }
        );
        let edits: Vec<String> = self
            .inputs
            .iter()
            .filter(|i| i.rollout() != Rollout::No)
            .map(|i| format!("{} ({})", i.cluster, rolling(&i.changes).join(", ")))
            .collect();
        if !edits.is_empty() {
            let _ = writeln!(
                out,
                "The edits of cases replace Machines (or may) in {}: {}",
                plural(edits.len(), "Cluster"),
                edits.join("; ")
            );
        }
        out
    }

    /// The report as JSON, for tools.
    pub fn json(&self) -> Value {
        let clusters: Vec<Value> = self
            .clusters
            .iter()
            .map(|cluster| {
                let (outcome, error, objects) = match &cluster.outcome {
                    Outcome::Unchanged => ("unchanged", None, Vec::new()),
                    Outcome::Changed(changes) => ("changed", None, objects_json(changes)),
                    Outcome::Breaks(e) => ("breaks", Some(e), Vec::new()),
                    Outcome::Fixed(e) => ("fixed", Some(e), Vec::new()),
                    Outcome::New(e) => ("new", Some(e), Vec::new()),
                    Outcome::Fails(e) => ("fails", Some(e), Vec::new()),
                };
                json!({
                    "cluster": cluster.cluster,
                    "file": cluster.file,
                    "outcome": outcome,
                    "rollout": cluster.rollout().name(),
                    "rollsOut": cluster.rolls_out(),
                    "error": error,
                    "warnings": cluster.warnings,
                    "objects": objects,
                })
            })
            .collect();
        let inputs: Vec<Value> = self
            .inputs
            .iter()
            .map(|input| {
                json!({
                    "cluster": input.cluster,
                    "file": input.file,
                    "change": input.kind,
                    "head": match &input.head {
                        None => Value::Null,
                        Some(Ok(())) => json!("renders"),
                        Some(Err(_)) => json!("fails"),
                    },
                    "error": input.head.as_ref().and_then(|r| r.as_ref().err()),
                    "rollout": input.rollout().name(),
                    "rollsOut": rolling(&input.changes),
                    "objects": objects_json(&input.changes),
                })
            })
            .collect();
        let variables: Vec<Value> = self
            .variables
            .iter()
            .map(|v| {
                json!({
                    "class": v.class,
                    "variable": v.variable,
                    "change": v.kind,
                    "meaning": v.meaning,
                    "clusters": v.clusters,
                })
            })
            .collect();
        json!({
            "base": self.base,
            "head": self.head,
            "notes": self.notes,
            "clusters": clusters,
            "inputs": inputs,
            "variables": variables,
        })
    }
}

/// How many objects change and whether Machines roll out, then each object with what CAPI does
/// and its fields; ends with a newline.
fn changes_text(changes: &[ObjectChange]) -> String {
    let rolls = rolling(changes);
    let mut out = format!(
        "{}; {}\n",
        if changes.len() == 1 {
            "1 object changes".to_string()
        } else {
            format!("{} objects change", changes.len())
        },
        match strongest(changes) {
            Rollout::No => "no Machine is replaced".to_string(),
            Rollout::Yes => format!("Machines roll out: {}", rolls.join(", ")),
            Rollout::ProviderDecides => format!("Machines may roll out: {}", rolls.join(", ")),
        }
    );
    for change in changes {
        let _ = writeln!(
            out,
            "  {} {} ({})\n    {}",
            change.kind,
            change.name,
            change.role,
            change.consequence()
        );
        for field in &change.fields {
            out.push_str(&field_lines(
                &field.path,
                field.before.as_ref(),
                field.after.as_ref(),
            ));
        }
    }
    out
}

/// The changes as JSON objects (`kind`, `name`, `role`, `effect`, `rollout`, `rollsOut`,
/// `consequence`, `fields`).
fn objects_json(changes: &[ObjectChange]) -> Vec<Value> {
    changes
        .iter()
        .map(|c| {
            json!({
                "kind": c.kind,
                "name": c.name,
                "role": c.role.to_string(),
                "effect": c.effect.name(),
                "rollout": c.rollout().name(),
                "rollsOut": c.rolls_out(),
                "consequence": c.consequence(),
                "fields": c.fields.iter().map(|f| json!({
                    "path": f.path,
                    "before": f.before,
                    "after": f.after,
                    "effect": f.effect.name(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The render failed because the extension does not serve a handler the ClusterClass calls.
fn not_served(error: &RenderError) -> bool {
    matches!(error, RenderError::Call { error, .. } if error.is_not_served())
}

/// Why a Cluster that rendered with the base fails with the head; for a handler the head no
/// longer serves, what that does to every Cluster of the ClusterClass and what to do.
fn breaks(case: &Case, error: &RenderError) -> String {
    match error {
        RenderError::Call {
            hook,
            handler,
            patch,
            error: call,
        } if call.is_not_served() => {
            let keep = if *hook == "GeneratePatches" {
                format!(
                    "keep serving `{handler}` beside its replacement (`capi-ext create hook GeneratePatches --next-version-of {handler}` makes one and keeps a case of today's ClusterClass), and move ClusterClasses over before removing it"
                )
            } else {
                format!("keep serving `{handler}` until no ClusterClass calls it")
            };
            format!(
                "ClusterClass {} (patch {patch}) calls the {hook} handler `{handler}`, which the head does not serve (removed or renamed; it answered: {call}). The ClusterClasses deployed today keep calling it, so every Cluster of them stops reconciling once the head is deployed: {keep}",
                case.class()
            )
        }
        other => other.to_string(),
    }
}

fn shown(value: Option<&Value>) -> String {
    match value {
        None => "(absent)".into(),
        Some(value) => {
            let text = value.to_string();
            if text.chars().count() > 100 {
                format!("{}…", text.chars().take(100).collect::<String>())
            } else {
                text
            }
        }
    }
}

/// One changed field: `path: before → after`, or a line diff for multi-line strings.
fn field_lines(path: &str, before: Option<&Value>, after: Option<&Value>) -> String {
    if let (Some(Value::String(a)), Some(Value::String(b))) = (before, after)
        && (a.contains('\n') || b.contains('\n'))
    {
        let mut out = format!("    {path}:\n");
        for change in similar::TextDiff::from_lines(a, b).iter_all_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Equal => continue,
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
            };
            let _ = writeln!(
                out,
                "      {sign} {}",
                change.value().trim_end_matches('\n')
            );
        }
        return out;
    }
    format!("    {path}: {} → {}\n", shown(before), shown(after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_strings_show_as_line_diffs() {
        let lines = field_lines(
            "spec.files[0].content",
            Some(&json!("a\nb\n")),
            Some(&json!("a\nc\n")),
        );
        assert_eq!(lines, "    spec.files[0].content:\n      - b\n      + c\n");
        assert_eq!(
            field_lines("spec.x", None, Some(&json!(1))),
            "    spec.x: (absent) → 1\n"
        );
    }

    /// A render that asked GenerateUpgradePlan and got these lists.
    fn planned(control_plane: &[&str], workers: &[&str]) -> Rendered {
        let steps = |versions: &[&str]| -> Vec<Value> {
            versions.iter().map(|v| json!({"version": v})).collect()
        };
        Rendered {
            exchanges: vec![capi_ext_render::Exchange {
                hook: "GenerateUpgradePlan",
                patch: String::new(),
                handler: "plan".into(),
                request: json!({}),
                response: json!({"status": "Success",
                    "controlPlaneUpgrades": steps(control_plane), "workersUpgrades": steps(workers)}),
            }],
            ..Rendered::default()
        }
    }

    #[test]
    fn a_changed_upgrade_plan_is_a_warning_about_capis_cache() {
        let base = planned(&["v1.35.0", "v1.36.0"], &[]);
        assert_eq!(
            plan_changed(&base, &planned(&["v1.35.0", "v1.36.0"], &[])),
            None
        );
        let warning = plan_changed(&base, &planned(&["v1.35.0", "v1.36.0"], &["v1.36.0"])).unwrap();
        assert!(
            warning.starts_with("the head plans its upgrade otherwise (GenerateUpgradePlan `plan`: workers none (CAPI's default) → v1.36.0); CAPI keeps an answer for 10 minutes by Cluster and versions"),
            "{warning}"
        );
        let warning = plan_changed(&base, &planned(&["v1.36.0"], &[])).unwrap();
        assert!(
            warning.contains("control plane v1.35.0, v1.36.0 → v1.36.0)"),
            "{warning}"
        );
        // No plan asked on either side (no upgrade due, or no plan extension): nothing to say.
        assert_eq!(plan_changed(&Rendered::default(), &base), None);
    }
}
