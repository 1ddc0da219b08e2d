//! ClusterClass variables from Rust types: the [`Schema`] and [`Variables`] traits behind
//! `#[derive(Schema)]` and `#[derive(Variables)]`.
//!
//! ```
//! use capi_ext::hooks::v1alpha1::*;
//! use capi_ext::{Extension, Variables};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, Variables)]
//! #[serde(rename_all = "camelCase")]
//! struct Vars {
//!     /// Registry of the control plane images.
//!     image_repository: String,
//!     #[schema(minimum = 1)]
//!     replicas: Option<u32>,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! // DiscoverVariables is answered from the type...
//! let extension = Extension::builder().variables::<Vars>("discover-variables").build().unwrap();
//! let response = extension.call(DiscoverVariables, "discover-variables", &DiscoverVariablesRequest::new()).await.unwrap();
//! assert_eq!(response.variables[0].name, "imageRepository");
//!
//! // ...and GeneratePatches reads the values back into it.
//! let request: GeneratePatchesRequest = serde_json::from_value(serde_json::json!({
//!     "variables": [{"name": "imageRepository", "value": "registry.example.com"},
//!                   {"name": "builtin", "value": {"cluster": {"name": "c1"}}}]
//! })).unwrap();
//! let vars: Vars = request.variables().unwrap();
//! assert_eq!((vars.image_repository.as_str(), vars.replicas), ("registry.example.com", None));
//! # }
//! ```

#[cfg(feature = "schemars")]
pub mod schemars;

use crate::hooks::v1alpha1::ClusterClassVariable;
use capi_ext_codegen::schema::{self as rules, Primitive};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A type with a ClusterClass variable schema (CAPI's OpenAPI v3 subset), as JSON.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no ClusterClass variable schema",
    label = "this type cannot be described to CAPI",
    note = "add #[derive(capi_ext::Schema)] to it, or use a type CAPI can express (String, integers, bool, Vec, string-keyed maps, serde_json::Value)"
)]
pub trait Schema {
    /// The schema.
    fn schema() -> Value;
}

/// A set of ClusterClass variables: each field of the deriving struct is one variable.
pub trait Variables: serde::de::DeserializeOwned {
    /// The definitions as CAPI's `ClusterClassVariable` JSON (what the derive generates).
    fn definitions_json() -> Vec<Value>;

    /// The definitions, as sent in a DiscoverVariables response.
    fn definitions() -> Vec<ClusterClassVariable> {
        Self::definitions_json()
            .into_iter()
            .map(|v| {
                serde_json::from_value(v).expect("generated definitions are ClusterClassVariables")
            })
            .collect()
    }
}

macro_rules! primitive {
    ($p:ident: $($t:ty),*) => {$(
        impl Schema for $t {
            fn schema() -> Value {
                rules::primitive(Primitive::$p)
            }
        }
    )*};
}

primitive!(String: String, char);
primitive!(Integer: i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
primitive!(Number: f32, f64);
primitive!(Boolean: bool);
primitive!(Any: Value);
primitive!(IntOrString: IntOrString);

impl<T: Schema> Schema for Option<T> {
    fn schema() -> Value {
        T::schema()
    }
}

impl<T: Schema> Schema for Box<T> {
    fn schema() -> Value {
        T::schema()
    }
}

macro_rules! sequence {
    ($($t:ident),*) => {$(
        impl<T: Schema> Schema for std::collections::$t<T> {
            fn schema() -> Value {
                rules::array(T::schema())
            }
        }
    )*};
}

sequence!(VecDeque, BTreeSet, HashSet);

impl<T: Schema> Schema for Vec<T> {
    fn schema() -> Value {
        rules::array(T::schema())
    }
}

impl<T: Schema> Schema for std::collections::BTreeMap<String, T> {
    fn schema() -> Value {
        rules::map(T::schema())
    }
}

impl<T: Schema, S> Schema for std::collections::HashMap<String, T, S> {
    fn schema() -> Value {
        rules::map(T::schema())
    }
}

/// An integer or a string (`x-kubernetes-int-or-string`), e.g. `maxSurge: 1` or `"25%"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IntOrString {
    /// An integer.
    Int(i64),
    /// A string.
    String(String),
}
