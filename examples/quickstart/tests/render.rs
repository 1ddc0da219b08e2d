//! The quickstart's patches rendered in-process with `capi_ext_render`, from the same files
//! `capi-ext render` reads (render/): no server, no cluster.

use capi_ext_render::{Input, RenderError, Rendered, render};
use serde_json::Value;

fn input() -> Input {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/render");
    Input::from_yaml_files(
        ["cluster.yaml", "clusterclass.yaml", "templates.yaml"].map(|f| format!("{dir}/{f}")),
    )
    .unwrap()
}

fn set_repository(input: &mut Input, repository: &str) {
    input.cluster["spec"]["topology"]["variables"][0]["value"] = repository.into();
}

async fn run(input: &Input) -> Result<Rendered, RenderError> {
    let extension = capi_ext_example_quickstart::extension().build().unwrap();
    render(input, &extension).await
}

#[tokio::test]
async fn patches_land_on_the_objects_capi_creates() {
    let rendered = run(&input()).await.unwrap();
    let kinds: Vec<&str> = rendered
        .objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "GenericInfrastructureCluster",
            "GenericControlPlane",
            "GenericInfrastructureMachineTemplate",
            "GenericBootstrapConfigTemplate",
            "GenericInfrastructureMachineTemplate",
            "MachineDeployment",
            "Cluster",
        ]
    );
    let control_plane = rendered.object("GenericControlPlane").unwrap();
    assert_eq!(
        control_plane["spec"]["imageRepository"],
        "registry.example.com/k8s"
    );
    assert_eq!(control_plane["spec"]["version"], "v1.34.0");
    assert_eq!(control_plane["spec"]["replicas"], 3);
    let worker = &rendered.objects[4];
    assert_eq!(
        worker["spec"]["template"]["metadata"]["labels"]["quickstart.capi-ext.io/class"],
        "default-worker"
    );
    assert_eq!(
        worker["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"],
        "md-0"
    );
    assert_eq!(
        rendered.object("GenericInfrastructureCluster").unwrap()["spec"]["extensionSettings"],
        serde_json::json!({"origin": "clusterclass"})
    );
    // Nothing else moved: the unpatched control plane differs only by the image repository.
    let mut before = rendered.unpatched[1].clone();
    before["spec"]["imageRepository"] = "registry.example.com/k8s".into();
    assert_eq!(&before, control_plane);
    let hooks: Vec<&str> = rendered.exchanges.iter().map(|e| e.hook).collect();
    assert_eq!(
        hooks,
        ["DiscoverVariables", "GeneratePatches", "ValidateTopology"]
    );
}

#[tokio::test]
async fn the_request_carries_builtins_and_only_declared_variables() {
    let mut input = input();
    input.cluster["spec"]["topology"]["variables"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "undeclared", "value": 1}));
    let err = run(&input).await.unwrap_err().to_string();
    assert!(err.contains("spec.topology.variables[undeclared]: Invalid value: \"1\": variable is not defined (defined: imageRepository, workerSize)"), "{err}");

    let rendered = run(&self::input()).await.unwrap();
    let request = &rendered.exchanges[1].request;
    let global = request["variables"].as_array().unwrap();
    // workerSize is the ClusterClass's own (inline) variable: not sent to the extension.
    let names: Vec<&str> = global.iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["imageRepository", "builtin"]);
    assert_eq!(
        global[1]["value"]["cluster"]["topology"]["version"],
        "v1.34.0"
    );
    assert_eq!(
        global[1]["value"]["cluster"]["network"]["pods"][0],
        "192.168.0.0/16"
    );
    let holders: Vec<String> = request["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{} {}",
                i["holderReference"]["kind"].as_str().unwrap(),
                i["holderReference"]["fieldPath"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        holders,
        [
            "Cluster spec.infrastructureRef",
            "Cluster spec.controlPlaneRef",
            "GenericControlPlane spec.machineTemplate.spec.infrastructureRef",
            "MachineDeployment spec.template.spec.bootstrap.configRef",
            "MachineDeployment spec.template.spec.infrastructureRef",
        ]
    );
    let md = &request["items"][4]["variables"][0]["value"]["machineDeployment"];
    assert_eq!(md["topologyName"], "md-0");
    assert_eq!(md["replicas"], 2);
    assert_eq!(md["class"], "default-worker");
}

#[tokio::test]
async fn cel_rules_and_the_validator_reject_as_capi_would() {
    let mut input = input();
    set_repository(&mut input, "registry.example.com/");
    let err = run(&input).await.unwrap_err();
    assert!(matches!(err, RenderError::Variables(_)));
    assert!(err.to_string().contains(
        // The very text CAPI's Cluster webhook answers (see the conformance e2e log).
        r#"spec.topology.variables[imageRepository].value: Invalid value: "\"registry.example.com/\"": imageRepository must not end with '/'"#
    ), "{err}");

    set_repository(&mut input, "docker.io/library");
    let err = run(&input).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "ValidateTopology `validate` (patch quickstart) answered Failure: imageRepository docker.io/library is on docker.io, which is rate limited"
    );
}

#[tokio::test]
async fn existing_objects_keep_their_names() {
    let mut input = input();
    input.templates.push(serde_json::json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachineDeployment",
        "metadata": {"name": "demo-md-0-abcde", "namespace": "default", "labels": {
            "cluster.x-k8s.io/cluster-name": "demo",
            "topology.cluster.x-k8s.io/deployment-name": "md-0"}},
        // CAPI writes the version onto every MachineDeployment it creates.
        "spec": {"template": {"spec": {
            "version": "v1.34.0",
            "bootstrap": {"configRef": {"name": "demo-md-0-boot1"}},
            "infrastructureRef": {"name": "demo-md-0-infr1"}}}}
    }));
    let rendered = run(&input).await.unwrap();
    assert_eq!(rendered.objects[3]["metadata"]["name"], "demo-md-0-boot1");
    assert_eq!(rendered.objects[4]["metadata"]["name"], "demo-md-0-infr1");
    let request = &rendered.exchanges[1].request;
    assert_eq!(
        request["items"][4]["holderReference"]["name"],
        "demo-md-0-abcde"
    );
    assert_eq!(
        request["items"][4]["variables"][0]["value"]["machineDeployment"]["name"],
        "demo-md-0-abcde"
    );
}

#[tokio::test]
async fn defaults_fill_an_absent_variable() {
    let mut input = input();
    input.cluster["spec"]["topology"]["variables"] = Value::Null;
    let rendered = run(&input).await.unwrap();
    assert_eq!(
        rendered.cluster["spec"]["topology"]["variables"],
        // In the order of the ClusterClass status: by name, as CAPI's webhook appends them.
        serde_json::json!([
            {"name": "imageRepository", "value": "registry.k8s.io"},
            {"name": "workerSize", "value": "medium"}
        ])
    );
    // enabledIf turns the worker-size patch off for the default size.
    assert_eq!(
        rendered.objects[4]["spec"]["template"]["spec"]["size"],
        "medium"
    );
    assert_eq!(
        rendered.object("GenericControlPlane").unwrap()["spec"]["imageRepository"],
        "registry.k8s.io"
    );
}

#[tokio::test]
async fn before_capi_1_14_metadata_patched_onto_templates_is_dropped() {
    const LABEL: &str = capi_ext_example_quickstart::CLASS_LABEL;
    let label = |rendered: &Rendered| {
        rendered.objects[4]["spec"]["template"]["metadata"]["labels"][LABEL].clone()
    };
    let rendered = run(&input()).await.unwrap();
    assert_eq!(label(&rendered), "default-worker");
    let mut old = input();
    old.capi_version = Some(capi_ext::CapiVersion::new(1, 13));
    let rendered = run(&old).await.unwrap();
    assert_eq!(
        label(&rendered),
        Value::Null,
        "v1.13 keeps only spec.template.spec"
    );
    // The spec the patches set still lands.
    assert_eq!(
        rendered.objects[1]["spec"]["imageRepository"],
        "registry.example.com/k8s"
    );
}
