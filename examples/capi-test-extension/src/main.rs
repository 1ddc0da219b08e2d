//! Cluster API's test extension, served: flags, logging and the HTTPS server come from
//! capi-ext (`--help` lists them).

fn main() -> std::process::ExitCode {
    capi_ext::Server::run(capi_ext_example_capi_test_extension::extension(
        capi_ext::clusters::Clusters::infer(),
    ))
}
