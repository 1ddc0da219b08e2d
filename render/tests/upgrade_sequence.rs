//! The upgrade sequence through the whole render: a Cluster whose objects exist, given a new
//! Kubernetes version, renders the step CAPI takes next, and the patches see those versions.

use capi_ext::hooks::v1alpha1::{
    GenerateUpgradePlan, GenerateUpgradePlanRequest, GenerateUpgradePlanResponse, UpgradeStep,
};
use capi_ext::{Extension, Registration};
use capi_ext_render::{CallError, Caller, Input, Rendered, UpgradeHook, render};
use serde_json::{Value, json};

mod common;

fn extension() -> Extension {
    common::accepting(Extension::builder())
}

/// The quickstart's external patch alone, without variables.
fn base() -> Input {
    let mut input = common::external_only();
    for patch in input.cluster_class["spec"]["patches"]
        .as_array_mut()
        .unwrap()
    {
        patch["external"]
            .as_object_mut()
            .unwrap()
            .remove("discoverVariablesExtension");
    }
    input
}

/// The input again with the rendered objects existing (the control plane's status set by
/// `status`) and the Cluster at `version`.
fn again(first: &Rendered, version: &str, status: Option<&str>) -> Input {
    let mut input = base();
    for object in &first.objects {
        let mut object = object.clone();
        match object["kind"].as_str() {
            Some("Cluster") => {
                input.cluster["spec"]["infrastructureRef"] =
                    object["spec"]["infrastructureRef"].clone();
                input.cluster["spec"]["controlPlaneRef"] =
                    object["spec"]["controlPlaneRef"].clone();
                continue;
            }
            Some("GenericControlPlane") => {
                if let Some(status) = status {
                    object["status"] = json!({"version": status});
                }
            }
            _ => {}
        }
        input.templates.push(object);
    }
    input.cluster["spec"]["topology"]["version"] = json!(version);
    input
}

fn version(rendered: &Rendered, kind: &str) -> String {
    let object = rendered.object(kind).unwrap();
    let version = if kind == "GenericControlPlane" {
        &object["spec"]["version"]
    } else {
        &object["spec"]["template"]["spec"]["version"]
    };
    version.as_str().unwrap().to_string()
}

/// The versions the GeneratePatches request gave the patches, by builtin.
fn builtin_versions(rendered: &Rendered) -> Vec<String> {
    let request = &rendered
        .exchanges
        .iter()
        .find(|e| e.hook == "GeneratePatches")
        .unwrap()
        .request;
    let mut out = Vec::new();
    for item in request["items"].as_array().unwrap() {
        for variable in item["variables"].as_array().into_iter().flatten() {
            let value: &Value = &variable["value"];
            for key in ["controlPlane", "machineDeployment"] {
                if let Some(v) = value[key]["version"].as_str() {
                    out.push(format!("{key} {v}"));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[tokio::test]
async fn a_stable_control_plane_starts_the_upgrade_and_the_workers_wait() {
    let first = render(&base(), &extension()).await.unwrap();
    assert_eq!(version(&first, "GenericControlPlane"), "v1.34.0");

    // Still provisioning (no status version): nothing moves.
    let held = render(&again(&first, "v1.35.0", None), &extension())
        .await
        .unwrap();
    assert_eq!(version(&held, "GenericControlPlane"), "v1.34.0");
    assert_eq!(version(&held, "MachineDeployment"), "v1.34.0");

    // Provisioned and stable: the control plane goes first, the MachineDeployment waits.
    let started = render(&again(&first, "v1.35.0", Some("v1.34.0")), &extension())
        .await
        .unwrap();
    assert_eq!(version(&started, "GenericControlPlane"), "v1.35.0");
    assert_eq!(version(&started, "MachineDeployment"), "v1.34.0");
    assert_eq!(
        builtin_versions(&started),
        ["controlPlane v1.35.0", "machineDeployment v1.34.0"]
    );
    let cluster = started.object("Cluster").unwrap();
    assert_eq!(
        cluster["metadata"]["annotations"]["runtime.cluster.x-k8s.io/pending-hooks"],
        "AfterClusterUpgrade"
    );
    assert_eq!(
        cluster["metadata"]["annotations"]["topology.internal.cluster.x-k8s.io/upgrade-step"],
        "v1.35.0"
    );
    assert!(
        started
            .warnings
            .iter()
            .any(|w| w.contains("BeforeClusterUpgrade")),
        "{:?}",
        started.warnings
    );

    // Two minors at once: no plan, the step named.
    let err = render(&again(&first, "v1.36.0", Some("v1.34.0")), &extension())
        .await
        .unwrap_err();
    assert_eq!(err.step().as_str(), "upgrade");
    assert!(
        err.to_string()
            .contains("cannot compute an upgrade plan from v1.34.0 to v1.36.0"),
        "{err}"
    );
}

/// An extension whose GenerateUpgradePlan handler `plan` answers `answer` for the request.
fn planning(answer: fn(&GenerateUpgradePlanRequest) -> GenerateUpgradePlanResponse) -> Extension {
    common::accepting(Extension::builder().handler(Registration::new(
        GenerateUpgradePlan,
        "plan",
        move |request: GenerateUpgradePlanRequest| async move { answer(&request) },
    )))
}

fn steps(versions: &[&str]) -> Vec<UpgradeStep> {
    versions
        .iter()
        .map(|v| UpgradeStep {
            version: v.to_string(),
        })
        .collect()
}

/// A minor at a time to the target, the workers left to CAPI.
fn minor_by_minor(request: &GenerateUpgradePlanRequest) -> GenerateUpgradePlanResponse {
    let minor = |v: &str| v.split('.').nth(1).unwrap().parse::<u32>().unwrap();
    let (from, to) = (
        minor(&request.from_control_plane_kubernetes_version),
        minor(&request.to_kubernetes_version),
    );
    let mut response = GenerateUpgradePlanResponse::success();
    let versions: Vec<String> = (from + 1..=to).map(|m| format!("v1.{m}.0")).collect();
    response.control_plane_upgrades =
        steps(&versions.iter().map(String::as_str).collect::<Vec<_>>());
    response
}

/// `again` with the ClusterClass taking its plans from the `plan` handler.
fn planned(first: &Rendered, version: &str) -> Input {
    let mut input = again(first, version, Some("v1.34.0"));
    input.cluster_class["spec"]["upgrade"] =
        json!({"external": {"generateUpgradePlanExtension": "plan.quickstart"}});
    input
}

#[tokio::test]
async fn a_generate_upgrade_plan_extension_plans_the_upgrade() {
    let first = render(&base(), &extension()).await.unwrap();

    // Two minors at once, planned by the extension: the control plane takes the first step.
    let rendered = render(&planned(&first, "v1.36.0"), &planning(minor_by_minor))
        .await
        .unwrap();
    assert_eq!(version(&rendered, "GenericControlPlane"), "v1.35.0");
    assert_eq!(version(&rendered, "MachineDeployment"), "v1.34.0");
    let asked = rendered
        .exchanges
        .iter()
        .find(|e| e.hook == "GenerateUpgradePlan")
        .unwrap();
    assert_eq!(asked.handler, "plan");
    assert_eq!(
        asked.request["fromControlPlaneKubernetesVersion"],
        "v1.34.0"
    );
    assert_eq!(asked.request["fromWorkersKubernetesVersion"], "v1.34.0");
    assert_eq!(asked.request["toKubernetesVersion"], "v1.36.0");
    assert_eq!(asked.request["cluster"]["metadata"]["name"], "demo");
    assert!(asked.request["cluster"].get("status").is_none());

    // No upgrade due: CAPI does not ask.
    let mut settled = planned(&first, "v1.34.0");
    settled.cluster["spec"]["topology"]["version"] = json!("v1.34.0");
    let rendered = render(&settled, &planning(minor_by_minor)).await.unwrap();
    assert!(
        rendered
            .exchanges
            .iter()
            .all(|e| e.hook != "GenerateUpgradePlan")
    );

    // A plan that skips a minor: CAPI's validation refuses it, at the upgrade step.
    let err = render(
        &planned(&first, "v1.36.0"),
        &planning(|_| {
            let mut response = GenerateUpgradePlanResponse::success();
            response.control_plane_upgrades = steps(&["v1.36.0"]);
            response
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.step().as_str(), "upgrade");
    assert!(
        err.to_string().contains(
            "invalid ControlPlane upgrade plan: item 0; expecting a version with minor 34 or 35, found version v1.36.0"
        ),
        "{err}"
    );

    // The extension refuses: the upgrade stops there, with its message.
    let err = render(
        &planned(&first, "v1.36.0"),
        &planning(|_| GenerateUpgradePlanResponse::failure("no path to v1.36.0")),
    )
    .await
    .unwrap_err();
    assert_eq!(err.step().as_str(), "upgrade");
    assert_eq!(
        err.to_string(),
        "GenerateUpgradePlan `plan` (ClusterClass spec.upgrade.external.generateUpgradePlanExtension) answered Failure: no path to v1.36.0"
    );
}

#[tokio::test]
async fn a_blocking_before_cluster_upgrade_hook_holds_the_whole_cluster_and_the_patches_see_it() {
    let first = render(&base(), &extension()).await.unwrap();
    let mut input = again(&first, "v1.35.0", Some("v1.34.0"));
    input.blocking_hooks = [UpgradeHook::BeforeClusterUpgrade].into();
    let held = render(&input, &extension()).await.unwrap();
    assert_eq!(version(&held, "GenericControlPlane"), "v1.34.0");
    assert_eq!(version(&held, "MachineDeployment"), "v1.34.0");
    assert_eq!(
        builtin_versions(&held),
        ["controlPlane v1.34.0", "machineDeployment v1.34.0"]
    );
    let cluster = held.object("Cluster").unwrap();
    assert!(
        cluster["metadata"]["annotations"]
            .get("runtime.cluster.x-k8s.io/pending-hooks")
            .is_none(),
        "{cluster}"
    );
    assert!(
        held.warnings
            .iter()
            .any(|w| w.contains("BeforeClusterUpgrade") && w.contains("it blocks")),
        "{:?}",
        held.warnings
    );
}

/// Two extensions, as a ClusterClass may call them: the ExtensionConfig `planner`'s hooks go to
/// `planner`, every other hook to `patches`; each call's ExtensionConfig is kept.
struct TwoExtensions {
    patches: Extension,
    planner: Extension,
    calls: std::sync::Mutex<Vec<String>>,
}

impl Caller for TwoExtensions {
    async fn call(&self, path: &str, body: Vec<u8>) -> Result<Vec<u8>, CallError> {
        Caller::call(&self.patches, path, body).await
    }

    async fn call_extension(
        &self,
        extension_config: &str,
        path: &str,
        body: Vec<u8>,
    ) -> Result<Vec<u8>, CallError> {
        let hook = path.rsplit('/').nth(1).unwrap_or_default();
        self.calls
            .lock()
            .unwrap()
            .push(format!("{hook} {extension_config}"));
        match extension_config {
            "planner" => Caller::call(&self.planner, path, body).await,
            _ => Caller::call(&self.patches, path, body).await,
        }
    }
}

#[tokio::test]
async fn each_hook_goes_to_the_extension_config_the_class_names() {
    let first = render(&base(), &extension()).await.unwrap();
    let mut input = planned(&first, "v1.36.0");
    input.cluster_class["spec"]["upgrade"] =
        json!({"external": {"generateUpgradePlanExtension": "plan.planner"}});
    let planner = Extension::builder()
        .handler(Registration::new(
            GenerateUpgradePlan,
            "plan",
            |request: GenerateUpgradePlanRequest| async move { minor_by_minor(&request) },
        ))
        .build()
        .unwrap();
    let caller = TwoExtensions {
        patches: extension(),
        planner,
        calls: Default::default(),
    };
    let rendered = render(&input, &caller).await.unwrap();
    assert_eq!(version(&rendered, "GenericControlPlane"), "v1.35.0");
    let calls = caller.calls.into_inner().unwrap();
    assert!(
        calls.contains(&"generateupgradeplan planner".to_string()),
        "{calls:?}"
    );
    assert!(
        calls
            .iter()
            .filter(|c| c.starts_with("generatepatches"))
            .all(|c| c == "generatepatches quickstart"),
        "{calls:?}"
    );
    // The patches' extension alone does not serve the plan.
    let err = render(&input, &extension()).await.unwrap_err();
    assert!(err.to_string().contains("HTTP 404"), "{err}");
}

#[tokio::test]
async fn each_call_gets_the_settings_of_its_own_extension_config() {
    let first = render(&base(), &extension()).await.unwrap();
    let mut input = planned(&first, "v1.36.0");
    input.cluster_class["spec"]["upgrade"] =
        json!({"external": {"generateUpgradePlanExtension": "plan.planner"}});
    let owner = |name: &str| [("owner".to_string(), name.to_string())].into();
    input.settings = owner("any");
    input
        .extension_settings
        .insert("planner".into(), owner("planner"));
    input
        .extension_settings
        .insert("quickstart".into(), owner("quickstart"));
    let caller = TwoExtensions {
        patches: extension(),
        planner: planning(minor_by_minor),
        calls: Default::default(),
    };
    let rendered = render(&input, &caller).await.unwrap();
    let owners: Vec<(&str, &str)> = rendered
        .exchanges
        .iter()
        .map(|e| {
            (
                e.hook,
                e.request["settings"]["owner"].as_str().unwrap_or("none"),
            )
        })
        .collect();
    assert!(
        owners.contains(&("GenerateUpgradePlan", "planner")),
        "{owners:?}"
    );
    assert!(
        owners
            .iter()
            .filter(|(hook, _)| *hook != "GenerateUpgradePlan")
            .all(|(_, owner)| *owner == "quickstart"),
        "{owners:?}"
    );
}
