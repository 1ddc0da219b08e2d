//! The with-variables Runtime Extension: flags, logging and the HTTPS server come from capi-ext
//! (`--help` lists them); the handlers live in `hooks/`.

mod hooks;
mod patches;
mod variables;

fn main() -> std::process::ExitCode {
    let extension = capi_ext::Extension::builder()
        .variables::<variables::Variables>("discover-variables")
        .handler(hooks::generate_patches::generate_patches())
        .register::<hooks::validate_topology::validate_topology>()
        .register::<hooks::before_cluster_delete::before_cluster_delete>()
        .register::<hooks::cp_ready::cp_ready>()
        .handler(hooks::generate_patches_v2::generate_patches_v2())
        // capi-ext:register (`capi-ext create hook` adds handlers above this line)
        ;
    capi_ext::Server::run(extension)
}
