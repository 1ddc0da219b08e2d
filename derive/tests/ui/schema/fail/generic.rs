use capi_ext::Schema;

#[derive(Schema)]
struct Wrapper<T> {
    inner: T,
}

fn main() {}
