//! The YAML reader of `render` and `diff` (multi-document YAML, YAML 1.1 scalars) and the
//! sorting of objects into a Cluster, a ClusterClass and templates.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let _ = capi_ext_render::yaml11::from_str(text);
        if let Ok(documents) = capi_ext_render::documents(text) {
            let _ = capi_ext_render::Input::from_documents(documents);
        }
    });
}
