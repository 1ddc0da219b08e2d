//! The patch builders: a JSON pointer (first line) and a template object (the rest) through
//! `Template::get`/`set`/`remove`, and JSON patch documents built and read back.

use capi_ext::hooks::v1alpha1::{Patch, PatchType};
use capi_ext::patches::Template;
use serde_json::Value;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let (pointer, rest) = text.split_once('\n').unwrap_or((text, "{}"));
        let Ok(object) = serde_json::from_str::<Value>(rest) else {
            return;
        };
        let mut template = Template::new(object.clone());
        let _ = template.get(pointer);
        // What `set` wrote, `get` reads back (`-` appends, so there is nothing at `-` itself).
        if template.set(pointer, object.clone()).is_ok() && !pointer.ends_with("/-") {
            assert!(
                template.get(pointer).is_some(),
                "set then get at {pointer:?}"
            );
        }
        let _ = template.remove(pointer);
        let patch = Patch::json()
            .add(pointer, object.clone())
            .replace(pointer, Value::Null)
            .remove(pointer);
        let document = patch.document();
        Patch::from_document(PatchType::JsonPatch, &document).expect("a built patch reads back");
        let _ = Patch::from_document(PatchType::JsonPatch, rest.as_bytes());
        let _ = Patch::from_document(PatchType::JsonMergePatch, rest.as_bytes());
    });
}
