//! The minimal Runtime Extension: flags, logging and the HTTPS server come from capi-ext
//! (`--help` lists them); the handlers live in `hooks/`.

mod hooks;

fn main() -> std::process::ExitCode {
    let extension = capi_ext::Extension::builder()
        .register::<hooks::before_cluster_create::before_cluster_create>()
        // capi-ext:register (`capi-ext create hook` adds handlers above this line)
        ;
    capi_ext::Server::run(extension)
}
