use capi_ext::Variables;
use serde::Deserialize;

#[derive(Deserialize)]
struct Endpoint {
    host: String,
}

#[derive(Deserialize, Variables)]
struct Vars {
    endpoint: Endpoint,
}

fn main() {}
