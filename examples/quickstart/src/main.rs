//! An example Cluster API Runtime Extension.
//!
//! - `BeforeClusterCreate` (`hold-until-approved`): holds the creation of a Cluster until it
//!   carries the annotation `quickstart.capi-ext.io/approved: "true"`, asking CAPI to retry
//!   every 10 seconds;
//! - `DiscoverVariables` (`variables`): declares the `imageRepository` variable;
//! - `GeneratePatches` (`patches`): sets the image repository of KubeadmControlPlane
//!   templates and labels every MachineDeployment infrastructure template with its class;
//! - `ValidateTopology` (`validate`): rejects topologies pulling images from docker.io.

mod handlers;

fn main() -> std::process::ExitCode {
    capi_ext::Server::run(handlers::extension())
}
