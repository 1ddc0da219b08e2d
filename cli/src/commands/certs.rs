//! `capi-ext certs`: a development CA and serving certificate.

use crate::ops::certs::{self, CertsRequest};
use std::path::PathBuf;

/// Write ca.crt, tls.crt and tls.key for local runs (SANs localhost, 127.0.0.1, ::1 and
/// <service>.<namespace>.svc). Production manifests use cert-manager instead.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory to write the files into (created if needed).
    #[arg(long)]
    out: PathBuf,
    /// Service name of the extension, for the `<service>.<namespace>.svc` SAN.
    #[arg(long)]
    service: Option<String>,
    /// Namespace of the extension's service.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Replace existing files.
    #[arg(long)]
    force: bool,
    /// Print what would be written, write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<()> {
    let report = certs::write(&CertsRequest {
        out: args.out,
        service: args.service,
        namespace: args.namespace,
        force: args.force,
        dry_run: args.dry_run,
    })?;
    super::report(&report);
    Ok(())
}
