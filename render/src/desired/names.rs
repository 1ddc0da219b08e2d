//! The names CAPI gives the objects of a topology (`internal/topology/names`), made repeatable.

use super::input;
use crate::error::RenderError;
use crate::go_template::{self, Options};

/// CAPI's random name suffix, made deterministic so a render is repeatable: five characters of
/// the same alphabet, derived from the name's prefix.
pub(super) fn suffix(seed: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in seed.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x100000001b3);
    }
    (0..5)
        .map(|i| ALPHABET[((hash >> (i * 8)) % ALPHABET.len() as u64) as usize] as char)
        .collect()
}

/// `names.SimpleNameGenerator`: prefix (cut to 58 bytes) plus five random characters. The
/// suffix derives from the whole prefix and `role` (which tells apart objects that share a
/// prefix): two prefixes that differ only past the cut still get different names, as CAPI's
/// random suffixes almost surely are.
pub(super) fn simple_name(prefix: &str, role: &str) -> String {
    format!("{}{}", cut(prefix), suffix(&format!("{prefix}{role}")))
}

/// The first 58 bytes of `name` (at most), at a character boundary: where CAPI's generators cut
/// a name before its five random characters.
fn cut(name: &str) -> &str {
    let at = (0..=name.len().min(58))
        .rev()
        .find(|i| name.is_char_boundary(*i))
        .unwrap_or(0);
    &name[..at]
}

/// Stands for `.random` while the template runs (five private-use characters).
const RANDOM: &str = "\u{10fd01}\u{10fd02}\u{10fd03}\u{10fd04}\u{10fd05}";

/// A `naming.template`, executed as CAPI's `names.templateGenerator` executes it (text/template
/// without sprig, `missingkey=error`), with the values CAPI gives it (`.cluster.name`, ...) and
/// `.random` made repeatable. `object` tells apart the objects one template names (the
/// MachineDeployments of one class: a template without their topology name must still give
/// each its own name).
pub(super) fn template_name(
    template: &str,
    values: &[(&str, &str)],
    field: &str,
    object: &str,
) -> Result<String, RenderError> {
    let mut data = serde_json::json!({ "random": RANDOM });
    for (path, value) in values {
        let mut at = &mut data;
        let segments: Vec<&str> = path.trim_start_matches('.').split('.').collect();
        for segment in &segments[..segments.len() - 1] {
            at = at
                .as_object_mut()
                .expect("an object")
                .entry(segment.to_string())
                .or_insert_with(|| serde_json::json!({}));
        }
        at[segments[segments.len() - 1]] = serde_json::Value::from(*value);
    }
    let out = go_template::render_with(template, &data, Options::NAMING)
        .map_err(|e| input(format!("{field}: naming template `{template}`: {e}")))?;
    let seed = match out.find(RANDOM) {
        Some(at) => format!("{}{field}{object}", &out[..at]),
        None => String::new(),
    };
    let mut name = out.replace(RANDOM, &suffix(&seed));
    if name.len() > 63 {
        name = format!("{}{}", cut(&name), suffix(&name));
    }
    Ok(name)
}
