//! `capi-ext call`: one hook call exactly as CAPI makes it, and CAPI's verdict on the answer.

use crate::ops::call::{self, Connection};
use crate::ops::{examples, project};
use anyhow::Context;
use capi_ext::CapiVersion;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Call a handler as CAPI does (POST, no Content-Type, ?timeout=, HTTP/2 when offered, no
/// redirects), print the answer, and judge it by CAPI's rules. Exit 0: CAPI accepts a Success;
/// 1: the handler answered Failure; 2: CAPI would reject the answer or could not get one.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The hook, e.g. BeforeClusterCreate (Discovery needs no --handler).
    hook: String,
    /// The handler name as advertised in Discovery (not for Discovery itself). Inside a
    /// project: the project's handler of the hook, when it has one.
    #[arg(long)]
    handler: Option<String>,
    #[command(flatten)]
    connection: Connection,
    /// Request body (JSON, or the YAML `capi-ext example --format yaml` writes); default:
    /// `capi-ext example <Hook>`. `-` reads stdin.
    #[arg(short = 'f', long)]
    file: Option<PathBuf>,
    /// Seconds to wait (sent as ?timeout=).
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Cluster API version whose rules judge the answer.
    #[arg(long, default_value = "1.14")]
    capi_version: CapiVersion,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let hook = match capi_ext::catalog::find(&args.hook) {
        Some(h) if h.singleton => h,
        _ => project::hook_for(&args.hook, args.capi_version)?,
    };
    let body = match &args.file {
        Some(p) if p.as_os_str() == "-" => {
            call::request_body(std::io::read_to_string(std::io::stdin())?.as_bytes())?
        }
        Some(p) => call::request_body(
            &std::fs::read(p).with_context(|| format!("reading {}", p.display()))?,
        )
        .with_context(|| p.display().to_string())?,
        None => examples::request(hook).as_bytes().to_vec(),
    };
    let request: serde_json::Value =
        serde_json::from_slice(&body).context("the request is not JSON")?;
    if request
        .get("kind")
        .and_then(|k| k.as_str())
        .is_some_and(|k| k != hook.request_kind)
    {
        anyhow::bail!(
            "the request is a {}, not a {}",
            request["kind"].as_str().unwrap_or_default(),
            hook.request_kind
        );
    }
    let root = std::env::current_dir()
        .ok()
        .and_then(|dir| project::find_root(&dir).ok());
    let handler = call::handler_for(hook, args.handler.as_deref(), root.as_deref())?;
    let target = args.connection.target(Duration::from_secs(args.timeout))?;
    let path = hook.path(&handler);
    let answer = match call::post(&target, &path, body.clone()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    println!("{}", String::from_utf8_lossy(&answer.body));
    let verdict = call::judge(hook, &body, &answer, args.capi_version);
    eprintln!(
        "{}",
        crate::ops::files::status_line(
            "Called",
            &format!(
                "{path} over {} in {:.1} ms: HTTP {}",
                answer.protocol,
                answer.elapsed.as_secs_f64() * 1e3,
                answer.status
            )
        )
    );
    Ok(verdict.report())
}
