//! The example extension's server; see the library for what each handler does.

fn main() -> std::process::ExitCode {
    capi_ext::Server::run(capi_ext_example_quickstart::extension())
}
