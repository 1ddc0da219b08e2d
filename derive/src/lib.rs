//! The macros of [capi-ext](https://docs.rs/capi-ext). Each is a one-line shim over
//! `capi_ext_codegen::model::render`, where the parsing, the checks and the expansion live
//! (and are unit-tested). Use them through `capi_ext`, which re-exports them.

use capi_ext_codegen::model::render;
use capi_ext_codegen::model::schema_item::DeriveKind;
use proc_macro::TokenStream;

/// Turns an async handler function into a registration.
///
/// ```
/// use capi_ext::hooks::v1alpha1::*;
/// use capi_ext::{Extension, hook};
///
/// /// Holds creation until the Cluster is labelled `approved`.
/// #[hook(BeforeClusterCreate, timeout = 5, failure_policy = Fail)]
/// async fn before_create(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
///     if req.cluster.metadata.labels.contains_key("approved") {
///         BeforeClusterCreateResponse::success()
///     } else {
///         BeforeClusterCreateResponse::success().retry_after(10)
///     }
/// }
///
/// let extension = Extension::builder().register::<before_create>().build().unwrap();
/// assert_eq!(extension.handlers()[0].name, "before-create");
/// assert_eq!(extension.handlers()[0].timeout_seconds, Some(5));
/// ```
///
/// - The first argument is the hook (any of the 16 hooks besides Discovery).
/// - `name = "..."`: the handler name, a DNS-1123 label; default: the function name in
///   kebab-case.
/// - `timeout = N`: seconds CAPI waits, 0..=30 (default 10).
/// - `failure_policy = Fail | Ignore` (default `Fail`).
///
/// The function keeps its name and can still be called directly; a type of the same name is
/// added for `Extension::builder().register::<name>()`. The function must be `async`, take the
/// hook's request and return its response (or `Result<Response, E>`, whose error becomes a
/// `Failure`). Every mistake is a compile error on its span: an unknown hook (with a
/// did-you-mean), a name that is not a DNS-1123 label, a timeout outside 0..=30, a wrong
/// request or response type, a function that is not async.
#[proc_macro_attribute]
pub fn hook(args: TokenStream, item: TokenStream) -> TokenStream {
    render::hook(args.into(), item.into()).into()
}

/// Declares an extension's ClusterClass variables: each field is one variable.
///
/// ```
/// use capi_ext::{Schema, Variables};
/// use serde::Deserialize;
///
/// #[derive(Deserialize, Variables)]
/// #[serde(rename_all = "camelCase")]
/// struct Vars {
///     /// Registry of the control plane images.
///     #[schema(min_length = 1, validation(rule = "!self.endsWith('/')", message = "no trailing '/'"))]
///     image_repository: String,
///     /// Worker settings.
///     workers: Option<Workers>,
/// }
///
/// #[derive(Deserialize, Schema)]
/// struct Workers {
///     #[schema(minimum = 1, maximum = 100)]
///     count: u32,
/// }
///
/// let defs = <Vars as capi_ext::schema::Variables>::definitions();
/// assert_eq!(defs[0].name, "imageRepository");
/// assert_eq!(defs[0].required, Some(true));
/// assert_eq!(defs[1].required, Some(false));
/// ```
///
/// The variable name is the serde name (`rename`, `rename_all` honoured); a variable is required
/// unless its type is `Option<_>` or it has `#[serde(default)]`; `#[serde(skip)]` fields are left
/// out. The schema comes from the field's type (strings, integers, numbers, booleans, `Vec`,
/// string-keyed maps, `serde_json::Value`, `Option`, and types deriving [`Schema`]) and from
/// `#[schema(...)]`: `description` (default: the doc comment), `pattern`, `format`,
/// `min_length`, `max_length`, `minimum`, `maximum`, `min_items`, `max_items`, `unique_items`,
/// `enum_values("a", "b")`, `default = <literal>` or `default_json = "<json>"`, `example` /
/// `example_json`, `validation(rule = "<CEL>", message = "...")` (repeatable),
/// `label(key = "...", value = "...")` and `annotation(...)` (`x-metadata`), `deprecated`, and
/// `schemars` (the field's schema from its type's `schemars::JsonSchema`, converted to CAPI's
/// subset; feature `schemars` of capi-ext; `capi-ext generate` builds the extension to read it).
/// CEL rules may also be written as kube-rs writes them, `#[x_kube(validation = "<CEL>")]` or
/// `#[x_kube(validation = Rule::new("<CEL>").message("..").reason(Reason::FieldValueInvalid).field_path(".x"))]`
/// (read as written; no kube dependency), and `validation(..)` takes `message_expression`,
/// `reason` and `field_path` too. Names CAPI refuses (`builtin`, names with a `.`) and types it cannot express are compile
/// errors.
#[proc_macro_derive(Variables, attributes(schema, x_kube))]
pub fn derive_variables(input: TokenStream) -> TokenStream {
    render::derive(input.into(), DeriveKind::Variables).into()
}

/// The ClusterClass schema of a type used inside variables: a struct with named fields (an
/// object) or an enum of unit variants (a string with allowed values). Takes the same
/// `#[schema(...)]` attributes as [`Variables`], on the type and on each field.
///
/// ```
/// use capi_ext::Schema;
///
/// /// How big the cluster is.
/// #[derive(Schema)]
/// #[allow(dead_code)]
/// enum Size { Small, Large }
///
/// let schema = <Size as capi_ext::schema::Schema>::schema();
/// assert_eq!(schema["enum"], serde_json::json!(["Small", "Large"]));
/// assert_eq!(schema["description"], "How big the cluster is.");
/// ```
#[proc_macro_derive(Schema, attributes(schema, x_kube))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    render::derive(input.into(), DeriveKind::Schema).into()
}
