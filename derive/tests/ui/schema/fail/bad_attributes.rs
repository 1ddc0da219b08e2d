use capi_ext::Schema;

#[derive(Schema)]
struct Pool {
    #[schema(minimum = "one")]
    min: u32,
    #[schema(maximun = 3)]
    max: u32,
}

fn main() {}
