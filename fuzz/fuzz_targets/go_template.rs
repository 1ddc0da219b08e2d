//! The Go-template engine of `render` (ClusterClass `enabledIf` and `valueFrom.template`).

use serde_json::json;

fn main() {
    let data = json!({
        "builtin": {"cluster": {"name": "c1", "namespace": "ns", "topology": {"version": "v1.34.0", "class": "quick"}},
                    "controlPlane": {"replicas": 3.0, "version": "v1.34.0"}},
        "size": "large", "cpu": 4.0, "ha": true, "tags": ["a", "b"], "net": {"cidr": "10.0.0.0/16", "mtu": 1500.0},
        "empty": "", "none": null
    });
    afl::fuzz!(|data_in: &[u8]| {
        if let Ok(template) = std::str::from_utf8(data_in) {
            let _ = capi_ext_render::go_template::render(template, &data);
        }
    });
}
