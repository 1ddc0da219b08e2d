use capi_ext::Variables;
use serde::Deserialize;

#[derive(Deserialize, Variables)]
struct Vars(String);

fn main() {}
