//! The ClusterClass variables of with-variables: each field is one variable. DiscoverVariables
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

#[cfg(test)]
mod tests {
    /// `docs/openapi.json`, written statically by `capi-ext generate manifests`, holds exactly the
    /// schemas this code serves in DiscoverVariables.
    #[test]
    fn generated_docs_match_the_code() {
        let doc: serde_json::Value = serde_json::from_str(include_str!("../docs/openapi.json")).unwrap();
        for definition in <super::Variables as capi_ext::Variables>::definitions_json() {
            let name = definition["name"].as_str().unwrap();
            let documented = &doc["components"]["schemas"][format!("variables.{name}")];
            let served = &definition["schema"]["openAPIV3Schema"];
            assert_eq!(documented, served, "stale docs: run `capi-ext generate manifests`");
        }
    }
}
