use capi_ext::Variables;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize, Variables)]
struct Vars {
    pair: (u8, u8),
    by_port: HashMap<u16, String>,
}

fn main() {}
