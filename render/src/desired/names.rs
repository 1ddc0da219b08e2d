//! The names CAPI gives the objects of a topology (`internal/topology/names`), made repeatable.

use super::input;
use crate::error::RenderError;

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

/// `names.SimpleNameGenerator`: prefix plus five random characters (`role` tells apart objects
/// that share a prefix).
pub(super) fn simple_name(prefix: &str, role: &str) -> String {
    let prefix = if prefix.len() > 58 {
        &prefix[..58]
    } else {
        prefix
    };
    format!("{prefix}{}", suffix(&format!("{prefix}{role}")))
}

/// The naming templates CAPI accepts in `naming.template`, with the values CAPI gives them.
pub(super) fn template_name(
    template: &str,
    values: &[(&str, &str)],
    field: &str,
) -> Result<String, RenderError> {
    let mut out = String::new();
    let mut rest = template;
    let mut seed = String::new();
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").ok_or_else(|| {
            input(format!(
                "{field}: unterminated `{{{{` in naming template `{template}`"
            ))
        })?;
        let expression = rest[start + 2..start + end].trim();
        if expression == ".random" {
            seed = format!("{out}{field}");
            out.push('\u{0}');
        } else {
            let value = values
                .iter()
                .find(|(name, _)| *name == expression)
                .map(|(_, v)| *v)
                .ok_or_else(|| {
                    let known: Vec<&str> =
                        values.iter().map(|(n, _)| *n).chain([".random"]).collect();
                    input(format!(
                        "{field}: render understands {} in naming templates, not `{expression}`",
                        known.join(", ")
                    ))
                })?;
            out.push_str(value);
        }
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    let mut name = out.replace('\u{0}', &suffix(&seed));
    if name.len() > 63 {
        name = format!("{}{}", &name[..58], suffix(&name));
    }
    Ok(name)
}
