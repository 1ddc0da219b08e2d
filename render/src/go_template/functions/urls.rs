//! sprig's `urlParse` and `urlJoin`, over Go's `net/url` ([`super::super::url`]).

use super::super::url::{self, Url};
use super::super::value::{MapElem, Value, go_bytes, go_string};
use super::{Out, Table, Ty, sig, string, text};
use std::collections::BTreeMap;

pub(super) const TABLE: Table = &[
    sig("urlParse", &[Ty::Str], None),
    sig("urlJoin", &[Ty::Map], None),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    match name {
        "urlParse" => {
            let parsed = url::parse(&go_bytes(text(&args[0])))
                .map_err(|e| format!("unable to parse url: {e}"))?;
            let s = |b: &[u8]| Value::str(go_string(b));
            let mut dict = BTreeMap::new();
            dict.insert("scheme".to_string(), s(&parsed.scheme));
            dict.insert("host".to_string(), s(&parsed.host));
            dict.insert("hostname".to_string(), s(&parsed.hostname()));
            dict.insert("path".to_string(), s(&parsed.path));
            dict.insert("query".to_string(), s(&parsed.raw_query));
            dict.insert("opaque".to_string(), s(&parsed.opaque));
            dict.insert("fragment".to_string(), s(&parsed.fragment));
            let user = parsed.user.map(|u| u.to_go()).unwrap_or_default();
            dict.insert("userinfo".to_string(), s(&user));
            Ok(Value::map(MapElem::Any, dict))
        }
        "urlJoin" => {
            let Value::Map(map) = &args[0] else {
                unreachable!("checked to be a map")
            };
            let entries = map.entries.borrow();
            // sprig's dictGetOrEmpty: a missing key is "", a value that is not a string panics.
            let get = |key: &str| -> Result<Vec<u8>, String> {
                match entries.get(key) {
                    None => Ok(Vec::new()),
                    Some(Value::Str(s)) => Ok(go_bytes(s).into_owned()),
                    Some(other) => Err(format!(
                        "unable to parse {key} key, must be of type string, but {} found",
                        other.kind_name()
                    )),
                }
            };
            let (scheme, host, path) = (get("scheme")?, get("host")?, get("path")?);
            let (query, opaque, fragment) = (get("query")?, get("opaque")?, get("fragment")?);
            let userinfo = get("userinfo")?;
            let user = if userinfo.is_empty() {
                None
            } else {
                let mut raw = b"proto://".to_vec();
                raw.extend(&userinfo);
                raw.extend(b"@host");
                url::parse(&raw)
                    .map_err(|e| format!("unable to parse userinfo in dict: {e}"))?
                    .user
            };
            let joined = Url::of_parts(scheme, host, path, query, opaque, fragment, user);
            string(go_string(&joined.to_go()))
        }
        _ => unreachable!("{name} is in the table"),
    }
}
