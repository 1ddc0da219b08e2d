//! `#[hook]`, `#[derive(Variables)]` and `#[derive(Schema)]` items parsed with syn into a model,
//! then rendered to tokens (for the macros, [`render`]) or to JSON (for the CLI,
//! [`static_schema`]). The checks live here once, so what the compiler rejects and what
//! `capi-ext generate` rejects are the same.

pub mod handler;
pub mod project;
pub mod rbac;
pub mod registrations;
pub mod render;
pub mod schema_item;
pub mod shape;
pub mod static_schema;
