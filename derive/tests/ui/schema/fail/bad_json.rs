use capi_ext::Schema;

#[derive(Schema)]
struct Pool {
    #[schema(default_json = "{not json", example = "a", example_json = "\"b\"")]
    tags: Vec<String>,
}

fn main() {}
