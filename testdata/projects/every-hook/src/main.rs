//! The every-hook Runtime Extension: flags, logging and the HTTPS server come from capi-ext
//! (`--help` lists them); the handlers live in `hooks/`.

mod hooks;
mod patches;
mod variables;

fn main() -> std::process::ExitCode {
    let extension = capi_ext::Extension::builder()
        .variables::<variables::Variables>("discover-variables")
        .register::<hooks::before_cluster_create::before_cluster_create>()
        .register::<hooks::after_control_plane_initialized::after_control_plane_initialized>()
        .register::<hooks::before_cluster_upgrade::before_cluster_upgrade>()
        .register::<hooks::before_control_plane_upgrade::before_control_plane_upgrade>()
        .register::<hooks::after_control_plane_upgrade::after_control_plane_upgrade>()
        .register::<hooks::before_workers_upgrade::before_workers_upgrade>()
        .register::<hooks::after_workers_upgrade::after_workers_upgrade>()
        .register::<hooks::after_cluster_upgrade::after_cluster_upgrade>()
        .register::<hooks::before_cluster_delete::before_cluster_delete>()
        .handler(hooks::generate_patches::generate_patches())
        .register::<hooks::validate_topology::validate_topology>()
        .register::<hooks::can_update_machine::can_update_machine>()
        .register::<hooks::can_update_machine_set::can_update_machine_set>()
        .register::<hooks::update_machine::update_machine>()
        .register::<hooks::generate_upgrade_plan::generate_upgrade_plan>()
        // capi-ext:register (`capi-ext create hook` adds handlers above this line)
        ;
    capi_ext::Server::run(extension)
}
