//! `capi-ext generate`: the files capi-ext owns, computed from the project's sources read
//! statically (no build): the ExtensionConfig, the ClusterClass patch stanza, the variables
//! reference and the OpenAPI document. Only variables marked `#[schema(schemars)]` need the
//! compiled extension: it is built, started locally and asked.

use super::files::{FileChange, Owner};
use super::project::Metadata;
use anyhow::{Context, anyhow, bail};
use capi_ext_codegen::catalog::{self, API_VERSION};
use capi_ext_codegen::model::project::{self, SourceModel};
use capi_ext_codegen::model::static_schema;
use serde_json::{Map, Value, json};
use std::path::Path;

/// Which generated files to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Manifests and docs.
    All,
    /// Only `docs/`.
    Docs,
    /// Only the Helm chart under `chart/`.
    Helm,
}

/// Where `capi-ext generate helm` writes the chart; once it exists, `generate manifests` and
/// `create hook` keep it in step with the handlers like the other generated files.
pub const CHART_DIR: &str = "chart";

fn is_chart(f: &FileChange) -> bool {
    f.path.starts_with(CHART_DIR)
}

/// The project's Rust sources under `src/`, as `(relative path, text)`, in path order.
pub fn sources(root: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root.join("src")).sort_by_file_name() {
        let entry = entry.with_context(|| format!("reading {}", root.join("src").display()))?;
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "rs") {
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .replace('\\', "/");
            let text =
                std::fs::read_to_string(entry.path()).with_context(|| format!("reading {rel}"))?;
            out.push((rel, text));
        }
    }
    Ok(out)
}

/// A handler as CAPI will see it.
#[derive(Debug, Clone, serde::Serialize)]
struct Served {
    name: String,
    hook: &'static str,
    timeout: i32,
    failure_policy: String,
}

fn served(model: &SourceModel) -> Vec<Served> {
    let mut out: Vec<Served> = model
        .handlers
        .iter()
        .map(|h| Served {
            name: h.model.name.clone(),
            hook: h.model.hook.name,
            timeout: h.model.timeout.unwrap_or(10),
            failure_policy: h
                .model
                .failure_policy
                .as_ref()
                .map_or("Fail".to_string(), |p| p.to_string()),
        })
        .chain(model.registrations.iter().map(|r| {
            Served {
                name: r.registered.name.clone(),
                hook: r.registered.hook.name,
                timeout: r.registered.timeout.unwrap_or(10),
                failure_policy: r
                    .registered
                    .failure_policy
                    .clone()
                    .unwrap_or_else(|| "Fail".into()),
            }
        }))
        .collect();
    if let Some(name) = &model.variables_handler {
        out.push(Served {
            name: name.clone(),
            hook: "DiscoverVariables",
            timeout: 10,
            failure_policy: "Fail".into(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn first_of(handlers: &[Served], hook: &str) -> Option<String> {
    handlers
        .iter()
        .find(|h| h.hook == hook)
        .map(|h| h.name.clone())
}

fn type_label(schema: &Value) -> String {
    if schema.get("x-kubernetes-int-or-string").is_some() {
        return "int-or-string".into();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("array") => format!("array of {}", type_label(&schema["items"])),
        Some("object") if schema.get("additionalProperties").is_some() => {
            format!("map of {}", type_label(&schema["additionalProperties"]))
        }
        Some(t) => t.to_string(),
        None => "any".into(),
    }
}

fn openapi(meta: &Metadata, handlers: &[Served], variables: &[Value]) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    let discovery = catalog::find("Discovery").expect("in the catalog");
    let mut operation = |path: String, id: &str, hook: &'static catalog::HookInfo, extra: Value| {
        let op = json!({
            "operationId": id,
            "summary": hook.name,
            "tags": [hook.tag.as_str()],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{}", hook.request_kind)}}}},
            "responses": {"200": {
                "description": "The hook's answer: status Success or Failure, with a message.",
                "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{}", hook.response_kind)}}}
            }}
        });
        let mut op = op.as_object().expect("an object").clone();
        if let Value::Object(extra) = extra {
            op.extend(extra);
        }
        paths.insert(path, json!({"post": op}));
        for kind in [hook.request_kind, hook.response_kind] {
            schemas.insert(
                kind.to_string(),
                json!({"type": "object", "description": format!("{API_VERSION} {kind}; the fields are those of Cluster API's runtime SDK OpenAPI (runtime-sdk-openapi.yaml).")}),
            );
        }
    };
    operation(discovery.path(""), "discovery", discovery, json!({}));
    for h in handlers {
        let hook = catalog::find(h.hook).expect("handlers name catalog hooks");
        operation(
            hook.path(&h.name),
            &h.name,
            hook,
            json!({"x-capi-timeoutSeconds": h.timeout, "x-capi-failurePolicy": h.failure_policy}),
        );
    }
    for v in variables {
        schemas.insert(
            format!("variables.{}", v["name"].as_str().unwrap_or_default()),
            v["schema"]["openAPIV3Schema"].clone(),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": meta.name, "version": meta.cli_version, "description": format!("The Runtime Extension {} for Cluster API {}: its handlers and its ClusterClass variables.", meta.name, meta.capi_version)},
        "paths": paths,
        "components": {"schemas": schemas}
    })
}

/// The generated files for the project at `root`. Errors name the file and line.
pub fn files(root: &Path, meta: &Metadata, scope: Scope) -> anyhow::Result<Vec<FileChange>> {
    let chart = scope == Scope::Helm || root.join(CHART_DIR).join("Chart.yaml").exists();
    Ok(in_scope(
        with_chart(root, meta, &sources(root)?, chart)?,
        scope,
    ))
}

/// Reads the sources; what generate cannot follow is printed as warnings.
fn read(sources: &[(String, String)]) -> anyhow::Result<SourceModel> {
    let model = project::read(sources).map_err(|errors| {
        anyhow!(
            "{}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    })?;
    for warning in &model.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(model)
}

/// The generated files for sources given as `(path, text)` (on disk or about to be written),
/// read statically.
pub fn from_sources(
    meta: &Metadata,
    sources: &[(String, String)],
) -> anyhow::Result<Vec<FileChange>> {
    let mut files = render(meta, &read(sources)?)?;
    files.retain(|f| !is_chart(f));
    Ok(files)
}

/// Like [`from_sources`], for the project at `root`: variables whose schemas only the compiled
/// extension knows (`#[schema(schemars)]`) are asked from it, built and started locally. The
/// Helm chart is included when the project has one.
pub fn for_project(
    root: &Path,
    meta: &Metadata,
    sources: &[(String, String)],
) -> anyhow::Result<Vec<FileChange>> {
    with_chart(
        root,
        meta,
        sources,
        root.join(CHART_DIR).join("Chart.yaml").exists(),
    )
}

fn with_chart(
    root: &Path,
    meta: &Metadata,
    sources: &[(String, String)],
    chart: bool,
) -> anyhow::Result<Vec<FileChange>> {
    let mut model = read(sources)?;
    let default = root.join("config/default/kustomization.yaml");
    if !model.rbac.is_empty()
        && std::fs::read_to_string(&default).is_ok_and(|text| {
            !text
                .lines()
                .any(|l| l.trim_start().starts_with("- ../rbac"))
        })
    {
        eprintln!(
            "warning: the sources have RBAC markers (`// +capi-ext:rbac:`), but config/default/kustomization.yaml does not deploy them: add `- ../rbac` under `components:` (the Deployment then runs as the ServiceAccount config/rbac/ grants them to)"
        );
    }
    let labels = compiled_only(&model);
    if !labels.is_empty() {
        let handler = model.variables_handler.clone().ok_or_else(|| {
            anyhow!("{} take their schemas from schemars, which only the running extension can give, but it registers no DiscoverVariables handler (`.variables::<T>(\"name\")`)", labels.join(", "))
        })?;
        eprintln!(
            "{:>12} the extension to read the schemas of {} (#[schema(schemars)])",
            "Building",
            labels.join(", ")
        );
        let definitions = compiled_variables(root, &handler)?;
        for (_, defs) in &mut model.variables {
            *defs = definitions.clone();
        }
    }
    let mut files = render(meta, &model)?;
    files.retain(|f| chart || !is_chart(f));
    Ok(files)
}

/// The `Struct.field` labels of the variables whose schemas only the compiled extension knows.
fn compiled_only(model: &SourceModel) -> Vec<String> {
    model
        .variables
        .iter()
        .flat_map(|(_, defs)| defs.iter().flat_map(static_schema::needs_compiled))
        .collect()
}

/// The variable definitions a locally started build of the project answers in DiscoverVariables.
fn compiled_variables(root: &Path, handler: &str) -> anyhow::Result<Vec<Value>> {
    let local = super::local::LocalExtension::start(root, std::time::Duration::from_secs(60))?;
    let path = catalog::find("DiscoverVariables")
        .expect("catalog hook")
        .path(handler);
    let answer = super::call::post(&local.target, &path, b"{}".to_vec())?;
    let response: Value = serde_json::from_slice(&answer.body)
        .with_context(|| format!("DiscoverVariables `{handler}` answered no JSON"))?;
    if answer.status != 200 || response["status"] != "Success" {
        bail!(
            "DiscoverVariables `{handler}` failed (HTTP {}): {}",
            answer.status,
            String::from_utf8_lossy(&answer.body).trim()
        );
    }
    Ok(response["variables"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// Renders the generated files from an already read source model, the Helm chart included.
pub fn render(meta: &Metadata, model: &SourceModel) -> anyhow::Result<Vec<FileChange>> {
    let compiled = compiled_only(model);
    if !compiled.is_empty() {
        bail!(
            "{} take their schemas from schemars, which only the compiled extension knows; run `capi-ext generate manifests` in the project",
            compiled.join(", ")
        );
    }
    let handlers = served(model);
    let target = meta.capi()?;
    for h in &handlers {
        let hook = catalog::find(h.hook).expect("catalog hook");
        if !hook.known_by(target) {
            bail!(
                "handler `{}`: {} was introduced in Cluster API {}, the project targets {target}",
                h.name,
                h.hook,
                hook.since
            );
        }
    }
    let variables: Vec<Value> = match model.variables.as_slice() {
        [] => Vec::new(),
        [(_, defs)] => defs.clone(),
        many => bail!(
            "{} types derive Variables ({}); an extension declares one set of variables",
            many.len(),
            many.iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    // The newest version of the GeneratePatches handler (`create hook --next-version-of`).
    let generate_patches = super::versions::newest(
        handlers
            .iter()
            .filter(|h| h.hook == "GeneratePatches")
            .map(|h| h.name.as_str()),
    )
    .map(str::to_string);
    let rbac = rbac_rules(&model.rbac);
    let validate_topology = first_of(&handlers, "ValidateTopology");
    let discover_variables = first_of(&handlers, "DiscoverVariables");
    let context = json!({
        "name": meta.name,
        "namespace": meta.namespace,
        "handlers": handlers,
        "topology": generate_patches.is_some() || validate_topology.is_some() || discover_variables.is_some(),
        "generate_patches": generate_patches,
        "validate_topology": validate_topology,
        "discover_variables": discover_variables,
        "upgrade_plan": first_of(&handlers, "GenerateUpgradePlan"),
        "rbac": rbac,
        "variables": variables.iter().map(|v| {
            let schema = &v["schema"]["openAPIV3Schema"];
            json!({
                "name": v["name"],
                "required": v["required"],
                "type": type_label(schema),
                "description": schema.get("description").and_then(Value::as_str).unwrap_or("").lines().next().unwrap_or("").replace('|', "\\|"),
                "schema": serde_json::to_string_pretty(schema).expect("JSON"),
            })
        }).collect::<Vec<_>>(),
    });
    let file = |path: &str, content: String| FileChange {
        path: path.into(),
        content,
        owner: Owner::Generated,
    };
    let mut files = vec![
        file(
            "config/extension/extensionconfig.yaml",
            capi_ext_templates::render(
                "project/config/extension/extensionconfig.yaml.hbs",
                &context,
            )?,
        ),
        file(
            "config/extension/clusterclass-patch.yaml",
            capi_ext_templates::render(
                "project/config/extension/clusterclass-patch.yaml.hbs",
                &context,
            )?,
        ),
        file(
            "docs/variables.md",
            capi_ext_templates::render("project/docs/variables.md.hbs", &context)?,
        ),
        file(
            "docs/openapi.json",
            serde_json::to_string_pretty(&openapi(meta, &handlers, &variables))? + "\n",
        ),
    ];
    if rbac.is_some() {
        for path in ["config/rbac/kustomization.yaml", "config/rbac/role.yaml"] {
            files.push(file(
                path,
                capi_ext_templates::render(&format!("project/{path}.hbs"), &context)?,
            ));
        }
    }
    if context["topology"] == true {
        files.push(file(
            "render/clusterclass.yaml",
            capi_ext_templates::render("project/render/clusterclass.yaml.hbs", &context)?,
        ));
    }
    for (name, _) in capi_ext_templates::TEMPLATES {
        if let Some(path) = name
            .strip_prefix("project/")
            .filter(|p| p.starts_with(CHART_DIR))
        {
            let content = capi_ext_templates::render(name, &context)?;
            // A template with nothing to say for this project (rbac.yaml without markers).
            if !content.trim().is_empty() {
                files.push(file(path.trim_end_matches(".hbs"), content));
            }
        }
    }
    Ok(files)
}

/// The `rules:` of the ClusterRole, as YAML lines, from the RBAC markers; `None` without any.
fn rbac_rules(markers: &[capi_ext_codegen::model::rbac::Rule]) -> Option<String> {
    if markers.is_empty() {
        return None;
    }
    let list = |items: &[String]| serde_json::to_string(items).expect("strings");
    let lines: Vec<String> = capi_ext_codegen::model::rbac::merge(markers)
        .iter()
        .map(|rule| {
            let mut text = format!(
                "  - apiGroups: {}\n    resources: {}\n",
                list(&rule.groups),
                list(&rule.resources)
            );
            if !rule.resource_names.is_empty() {
                text.push_str(&format!(
                    "    resourceNames: {}\n",
                    list(&rule.resource_names)
                ));
            }
            text.push_str(&format!("    verbs: {}", list(&rule.verbs)));
            text
        })
        .collect();
    Some(lines.join("\n"))
}

/// Keeps only the files of a scope.
pub fn in_scope(files: Vec<FileChange>, scope: Scope) -> Vec<FileChange> {
    files
        .into_iter()
        .filter(|f| match scope {
            Scope::All => true,
            Scope::Docs => f.path.starts_with("docs"),
            Scope::Helm => is_chart(f),
        })
        .collect()
}

/// The generated files that differ from disk, with a unified diff each.
pub fn stale(root: &Path, files: &[FileChange]) -> Vec<(String, String)> {
    files
        .iter()
        .filter_map(|f| {
            let old = std::fs::read_to_string(root.join(&f.path)).unwrap_or_default();
            (old != f.content).then(|| {
                let path = f.path.display().to_string();
                let diff = super::files::unified_diff(&path, &old, &f.content);
                (path, diff)
            })
        })
        .collect()
}
