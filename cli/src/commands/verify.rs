//! `capi-ext verify`: a running extension checked the way CAPI checks it.

use crate::ops::call::{self, Connection, Target};
use crate::ops::examples;
use capi_ext::CapiVersion;
use capi_ext::hooks::v1alpha1::DiscoveryResponse;
use std::process::ExitCode;
use std::time::Duration;

/// Call Discovery and check it as CAPI does (names, duplicates, timeouts, failure policies,
/// hooks the target CAPI knows), then call every advertised handler with its example request
/// and report, per handler, what CAPI would reject, and what would make it churn: a different
/// answer to the same request, GeneratePatches patches that depend on the order of the items, a
/// message with a time or random part. Exit 0 only when CAPI accepts everything.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    connection: Connection,
    /// Cluster API version whose rules apply.
    #[arg(long, default_value = "1.14")]
    capi_version: CapiVersion,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let target: Target = args.connection.target(Duration::from_secs(10))?;
    let discovery = capi_ext::catalog::find("Discovery").expect("catalog");
    let body = examples::request(discovery).as_bytes().to_vec();
    let answer = match call::post(&target, &discovery.path(""), body.clone()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let verdict = call::judge(discovery, &body, &answer, args.capi_version);
    let mut failed = !verdict.problems.is_empty();
    for p in &verdict.problems {
        println!("Discovery: rejected: {p}");
    }
    if failed {
        return Ok(ExitCode::from(2));
    }
    let response: DiscoveryResponse = serde_json::from_slice(&answer.body)?;
    println!(
        "Discovery: accepted ({} handlers, {})",
        response.handlers.len(),
        answer.protocol
    );
    for h in &response.handlers {
        let Some(hook) = capi_ext::catalog::find(&h.request_hook.hook) else {
            continue;
        };
        let request = examples::request(hook).as_bytes().to_vec();
        let line = match call::post(&target, &hook.path(&h.name), request.clone()) {
            Err(e) => {
                failed = true;
                format!("error: {e:#}")
            }
            Ok(a) => {
                let v = call::judge(hook, &request, &a, args.capi_version);
                let churn = if v.problems.is_empty() {
                    call::churn_problems(&target, hook, &hook.path(&h.name), &request, &a)
                } else {
                    Vec::new()
                };
                if !churn.is_empty() {
                    failed = true;
                    format!("accepted, but CAPI would churn: {}", churn.join("; "))
                } else if v.problems.is_empty() {
                    let status = v.status.map_or("?", |s| s.as_str());
                    let warn = if v.warnings.is_empty() {
                        String::new()
                    } else {
                        format!(" (warning: {})", v.warnings.join("; "))
                    };
                    format!(
                        "accepted, {status}{}{warn}",
                        if v.message.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", v.message)
                        }
                    )
                } else {
                    failed = true;
                    format!("rejected: {}", v.problems.join("; "))
                }
            }
        };
        println!("{} ({}): {line}", h.name, hook.name);
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
