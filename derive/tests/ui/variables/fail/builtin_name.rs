use capi_ext::Variables;
use serde::Deserialize;

#[derive(Deserialize, Variables)]
struct Vars {
    builtin: String,
    #[serde(rename = "image.repository")]
    image_repository: String,
}

fn main() {}
