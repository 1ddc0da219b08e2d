//! Decoding the way Go's encoding/json writes: helpers the hook types and the objects they
//! embed share (so that neither depends on the other for them).

use serde::Deserialize;

/// Deserializes `null` as the default value: Go's encoding/json writes a nil slice or map
/// without `omitempty` as `null` (e.g. `items` of GeneratePatches), and decodes `null` as empty.
pub(crate) fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
