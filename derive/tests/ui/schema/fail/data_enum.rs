use capi_ext::Schema;

#[derive(Schema)]
enum Size {
    Small,
    Custom(u32),
}

fn main() {}
