//! The Rust side of the conformance suite, driven by the Go programs in `conformance/`.
//!
//! - `capi-ext-conformance roundtrip`: reads JSON lines `{"hook", "part", "body"}` from stdin,
//!   decodes `body` into the typed request or response of `hook`, re-encodes it, and writes
//!   `{"ok": true, "body": ..., "typedView": ...}` or `{"ok": false, "error": ...}` per line
//!   (the typed view: see [`typed_view`]).
//! - `capi-ext-conformance go-template`: reads JSON lines `{"template", "data"}` and writes
//!   what render's Go-template engine makes of each (`{"output"}` or `{"error"}`), for the
//!   template differential (`conformance/gotemplate`); `go-template-functions` lists the
//!   functions it evaluates and those it refuses.
//! - `capi-ext-conformance responses`: prints the example extension's Discovery and
//!   DiscoverVariables responses, for CAPI's validation rules.
//! - `capi-ext-conformance bench-server [server flags]`: the Rust side of the side-by-side
//!   benchmark against CAPI's Go server (`conformance/bench`): BeforeClusterCreate answering
//!   Success, and GeneratePatches adding one label patch per item.
//! - `capi-ext-conformance lifecycle-extension [--target 1.N] [server flags]`: the upgrade hooks and
//!   GenerateUpgradePlan for the end-to-end run (see [`lifecycle`]).
//! - `capi-ext-conformance inplace-extension [--target 1.N] [server flags]`: CanUpdateMachineSet,
//!   CanUpdateMachine and UpdateMachine for the end-to-end run's in-place updates (see
//!   [`inplace`]).
//! - `capi-ext-conformance topology-extension --variant NAME [server flags]`: one of the
//!   successive versions of a topology extension the end-to-end proof of `capi-ext diff`
//!   deploys (see [`versions`]).
//! - `capi-ext-conformance kube-clients --kubeconfig FILE --workload-kubeconfig FILE`: the
//!   runtime's Kubernetes clients against the e2e's API server (see [`kube_clients`]).
//! - `capi-ext-conformance differential-extension [server flags]`: the extension CAPI's
//!   desired-state generator and `capi-ext render` both call in the differential test (see
//!   [`differential`]).

mod differential;
mod inplace;
mod kube_clients;
mod lifecycle;
mod typed_template;
mod typed_view;
mod versions;

use capi_ext::hooks::v1alpha1::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::io::{BufRead, Write};

#[derive(Deserialize)]
struct Input {
    hook: String,
    part: String,
    body: Box<serde_json::value::RawValue>,
}

fn reencode<T: Serialize + DeserializeOwned>(body: &str) -> Result<Value, String> {
    let typed: T = serde_json::from_str(body).map_err(|e| format!("decode: {e}"))?;
    serde_json::to_value(&typed).map_err(|e| format!("encode: {e}"))
}

fn parts<H: Hook>(_: H, part: &str, body: &str) -> Result<Value, String> {
    match part {
        "request" => reencode::<H::Request>(body),
        "response" => reencode::<H::Response>(body),
        other => Err(format!(
            "unknown part `{other}`: expected request or response"
        )),
    }
}

macro_rules! by_hook {
    ($name:expr, $part:expr, $body:expr, [$($hook:ident),*]) => {
        match $name {
            $( stringify!($hook) => parts($hook, $part, $body), )*
            other => Err(format!("unknown hook `{other}`")),
        }
    };
}

fn roundtrip(line: &str) -> Value {
    let input: Input = match serde_json::from_str(line) {
        Ok(i) => i,
        Err(e) => return json!({"ok": false, "error": format!("bad input line: {e}")}),
    };
    let result = by_hook!(
        input.hook.as_str(),
        input.part.as_str(),
        input.body.get(),
        [
            Discovery,
            BeforeClusterCreate,
            AfterControlPlaneInitialized,
            BeforeClusterUpgrade,
            BeforeControlPlaneUpgrade,
            AfterControlPlaneUpgrade,
            BeforeWorkersUpgrade,
            AfterWorkersUpgrade,
            AfterClusterUpgrade,
            BeforeClusterDelete,
            GeneratePatches,
            ValidateTopology,
            DiscoverVariables,
            CanUpdateMachine,
            CanUpdateMachineSet,
            UpdateMachine,
            GenerateUpgradePlan
        ]
    );
    let view = match input.part.as_str() {
        "request" => typed_view::of_request(input.body.get()),
        _ => Ok(Map::new()),
    };
    match (result, view) {
        (Ok(body), Ok(view)) => json!({"ok": true, "body": body, "typedView": view}),
        (Err(error), _) | (_, Err(error)) => json!({"ok": false, "error": error}),
    }
}

async fn before_cluster_create(_: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    BeforeClusterCreateResponse::success()
}

async fn generate_patches(req: GeneratePatchesRequest) -> GeneratePatchesResponse {
    req.items
        .iter()
        .fold(GeneratePatchesResponse::success(), |resp, item| {
            resp.patch(
                item.uid.clone(),
                Patch::json().add("/spec/template/metadata/labels/patched", "true"),
            )
        })
}

fn bench_server() -> std::process::ExitCode {
    let extension = capi_ext::Extension::builder()
        .handler(capi_ext::Registration::new(
            BeforeClusterCreate,
            "before-cluster-create",
            before_cluster_create,
        ))
        .handler(capi_ext::Registration::new(
            GeneratePatches,
            "generate-patches",
            generate_patches,
        ));
    serve(extension)
}

/// Serves `extension` with the server's flags (everything after the mode), for the Cluster API
/// release named by `--target` (default 1.14).
fn serve(extension: capi_ext::ExtensionBuilder) -> std::process::ExitCode {
    serve_args(extension, std::env::args().collect())
}

/// [`serve`] with these arguments (the program's, mode included).
fn serve_args(extension: capi_ext::ExtensionBuilder, args: Vec<String>) -> std::process::ExitCode {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        /// The Cluster API release the extension targets.
        #[arg(long, default_value = "1.14")]
        target: capi_ext::CapiVersion,
        #[command(flatten)]
        server: capi_ext::ServerOptions,
    }
    let cli = Cli::parse_from(args.into_iter().skip(1));
    capi_ext::Server::run_with(extension.target(cli.target), cli.server)
}

fn main() -> std::process::ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_default();
    if mode == "bench-server" {
        return bench_server();
    }
    if mode == "kube-clients" {
        return kube_clients::run(&std::env::args().skip(2).collect::<Vec<_>>());
    }
    if mode == "differential-extension" {
        return serve(differential::extension());
    }
    if mode == "lifecycle-extension" {
        return serve(lifecycle::extension());
    }
    if mode == "inplace-extension" {
        return serve(inplace::extension());
    }
    if mode == "topology-extension" {
        let mut args: Vec<String> = std::env::args().collect();
        let Some(at) = args.iter().position(|a| a == "--variant") else {
            eprintln!(
                "topology-extension needs --variant NAME (one of {:?})",
                versions::VARIANTS
            );
            return std::process::ExitCode::from(2);
        };
        let variant = args.get(at + 1).cloned().unwrap_or_default();
        args.drain(at..(at + 2).min(args.len()));
        return match versions::extension(&variant) {
            Ok(extension) => serve_args(extension, args),
            Err(e) => {
                eprintln!("{e}");
                std::process::ExitCode::from(2)
            }
        };
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match mode.as_str() {
        "roundtrip" => {
            for line in std::io::stdin().lock().lines() {
                let line = line.expect("stdin");
                serde_json::to_writer(&mut out, &roundtrip(&line)).expect("stdout");
                out.write_all(b"\n").expect("stdout");
                out.flush().expect("stdout");
            }
        }
        "go-template" => {
            // One JSON line per case: {"template", "data"} in, {"output"} or {"error"} out.
            for line in std::io::stdin().lock().lines() {
                let line = line.expect("stdin");
                let case: Value = serde_json::from_str(&line).expect("a JSON case");
                let template = case["template"].as_str().unwrap_or_default();
                let answer = match capi_ext_render::go_template::render(template, &case["data"]) {
                    Ok(output) => json!({"output": output}),
                    Err(error) => json!({"error": error}),
                };
                serde_json::to_writer(&mut out, &answer).expect("stdout");
                out.write_all(b"\n").expect("stdout");
                out.flush().expect("stdout");
            }
        }
        "api-rules" => {
            // The CRDs from the paths after the mode; one object per JSON line in, what render's
            // API-server rules make of its create out: {"object", "pruned", "errors",
            // "unchecked", "apply"} ("apply": the same of its server-side apply without its
            // status), or {"noCrd": true} / {"refused": why}.
            let mut crds = capi_ext_render::apiserver::Crds::default();
            for path in std::env::args().skip(2) {
                if let Err(e) = crds.add_path(std::path::Path::new(&path)) {
                    eprintln!("{e}");
                    return std::process::ExitCode::from(2);
                }
            }
            for line in std::io::stdin().lock().lines() {
                let line = line.expect("stdin");
                let object: Value = serde_json::from_str(&line).expect("a JSON object");
                let answer = |admitted: capi_ext_render::apiserver::Admitted| {
                    json!({
                        "object": admitted.object,
                        "pruned": admitted.pruned,
                        "errors": admitted.errors.iter().map(|e| json!({
                            "field": e.field, "reason": e.type_.cause(), "message": e.message,
                        })).collect::<Vec<_>>(),
                        "unchecked": admitted.unchecked.iter().map(|u| json!({
                            "field": u.field, "rule": u.rule, "reason": u.reason,
                        })).collect::<Vec<_>>(),
                    })
                };
                let answer = match crds.admit(&object) {
                    None => json!({"noCrd": true}),
                    Some(Err(why)) => json!({"refused": why}),
                    Some(Ok(admitted)) => {
                        let mut created = answer(admitted);
                        let mut without_status = object.clone();
                        if let Some(map) = without_status.as_object_mut() {
                            map.remove("status");
                        }
                        if let Some(Ok(applied)) =
                            crds.admit_as(&without_status, capi_ext_render::apiserver::Write::Apply)
                        {
                            created["apply"] = answer(applied);
                        }
                        created
                    }
                };
                serde_json::to_writer(&mut out, &answer).expect("stdout");
                out.write_all(b"\n").expect("stdout");
                out.flush().expect("stdout");
            }
        }
        "typed-template" => {
            // One JSON line per case: {"kind", "version", "object"} in; the object decoded into
            // capi-ext-types' type and encoded again out, with the fields the type did not know:
            // {"ok": true, "body", "unknown": [paths]} or {"ok": false, "error"}.
            for line in std::io::stdin().lock().lines() {
                let line = line.expect("stdin");
                let case: Value = serde_json::from_str(&line).expect("a JSON case");
                let answer = typed_template::roundtrip(
                    case["kind"].as_str().unwrap_or_default(),
                    case["version"].as_str().unwrap_or_default(),
                    &case["object"],
                );
                serde_json::to_writer(&mut out, &answer).expect("stdout");
                out.write_all(b"\n").expect("stdout");
                out.flush().expect("stdout");
            }
        }
        "go-template-functions" => {
            let unsupported: Vec<&str> = capi_ext_render::go_template::functions::UNSUPPORTED
                .iter()
                .map(|(name, _)| *name)
                .collect();
            let answer = json!({
                "supported": capi_ext_render::go_template::functions::names(),
                "unsupported": unsupported,
            });
            serde_json::to_writer(&mut out, &answer).expect("stdout");
            out.write_all(b"\n").expect("stdout");
        }
        "responses" => {
            let extension = capi_ext_example_quickstart::extension()
                .build()
                .expect("the example registers");
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let variables = runtime
                .block_on(extension.call(
                    DiscoverVariables,
                    "variables",
                    &DiscoverVariablesRequest::new(),
                ))
                .expect("the example declares variables");
            let discovery: Value =
                serde_json::from_slice(extension.discovery_body()).expect("discovery JSON");
            serde_json::to_writer(
                &mut out,
                &json!({"discovery": discovery, "discoverVariables": variables}),
            )
            .expect("stdout");
            out.write_all(b"\n").expect("stdout");
        }
        other => {
            eprintln!(
                "usage: capi-ext-conformance roundtrip|responses|kube-clients|go-template|api-rules|typed-template|go-template-functions|bench-server|lifecycle-extension|inplace-extension|topology-extension|differential-extension (got `{other}`)"
            );
            return std::process::ExitCode::from(2);
        }
    }
    std::process::ExitCode::SUCCESS
}
