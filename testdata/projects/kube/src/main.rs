//! The kube Runtime Extension: flags, logging and the HTTPS server come from capi-ext
//! (`--help` lists them); the handlers live in `hooks/`.

mod hooks;

// `Clusters::workload` reads each Cluster's `<name>-kubeconfig` Secret:
// +capi-ext:rbac:groups="",resources=secrets,verbs=get
// Each handler's own reads and writes get a marker like this one beside the code that makes them
// (`capi-ext generate` writes config/rbac/ from them).

fn main() -> std::process::ExitCode {
    let extension = capi_ext::Extension::builder()
        // Clients of the management cluster (the Pod's service account, or KUBECONFIG when run
        // locally: without one, `make run` and `capi-ext render` still serve) and of workload
        // clusters, for handlers that take `State<Clusters>`.
        .state(capi_ext::clusters::Clusters::infer())
        .register::<hooks::after_control_plane_initialized::after_control_plane_initialized>()
        // capi-ext:register (`capi-ext create hook` adds handlers above this line)
        ;
    capi_ext::Server::run(extension)
}
