use capi_ext::Variables;
use serde::Deserialize;

#[derive(Deserialize, Variables)]
struct Vars {
    #[x_kube(validation = Rule::new("self > 0").severity("high"))]
    replicas: u32,
    #[x_kube(validation = Rule::new("self != ''").message(42))]
    name: String,
    #[x_kube(merge_strategy = "merge")]
    labels: Option<std::collections::BTreeMap<String, String>>,
}

fn main() {}
