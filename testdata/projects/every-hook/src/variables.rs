//! The ClusterClass variables of every-hook: each field is one variable. DiscoverVariables
//! answers with their schemas; GeneratePatches and ValidateTopology read them back with
//! `req.variables::<Variables>()`.

use serde::Deserialize;

/// The variables this extension declares.
#[derive(Debug, Deserialize, capi_ext::Variables)]
#[serde(rename_all = "camelCase")]
pub struct Variables {
    /// Registry the control plane images are pulled from.
    #[schema(
        example = "registry.example.com",
        validation(rule = "!self.endsWith('/')", message = "imageRepository must not end with '/'")
    )]
    pub image_repository: Option<String>,
}
