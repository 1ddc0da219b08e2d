//! Composable GeneratePatches: many small, named, separately testable patch functions, each
//! with a typed [`Selector`] and an optional condition, combined into one handler by a
//! [`PatchSet`]. Patch functions edit a [`Template`]; the set answers CAPI with the JSON Patch
//! from the template it sent to the edited one.
//!
//! See [`PatchSet`] for a complete example.

mod difference;
mod selector;
mod set;
mod template;
mod typed;

pub use difference::{Difference, Differences};
pub use selector::{HOLDER_FIELD_PATHS, Part, Selector};
pub use set::{NamedPatch, PatchContext, PatchError, PatchSet};
pub use template::{EditError, MAX_POINTER_DEPTH, Template, diff};
pub use typed::{TypedDifference, TypedTemplate, UnknownFields};
