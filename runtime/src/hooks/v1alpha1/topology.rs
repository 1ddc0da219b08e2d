//! Topology mutation hooks: GeneratePatches, ValidateTopology, DiscoverVariables.

use super::common::{request_type, response_type};
use super::{ClusterClassVariable, Patch, TemplateObject, Variable};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// `namespace/name` of the Cluster named by the `builtin` variable, if any (the subject of a
/// topology request in logs and metrics; `capi_ext::topology::cluster_key`). Read from the
/// variable's text: only the two strings are decoded.
pub(crate) fn builtin_cluster_key(variables: &[Variable]) -> Option<String> {
    #[derive(Deserialize)]
    struct Builtin {
        cluster: Option<Key>,
    }
    #[derive(Deserialize)]
    struct Key {
        #[serde(default)]
        name: Value,
        #[serde(default)]
        namespace: Value,
    }
    let builtin = variables.iter().find(|v| v.name == "builtin")?;
    let cluster = builtin.value.decode::<Builtin>().ok()?.cluster?;
    let name = cluster.name.as_str()?;
    let namespace = cluster.namespace.as_str().unwrap_or_default();
    Some(format!("{namespace}/{name}"))
}

/// Where a template is used: the object holding the reference and the field path.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HolderReference {
    /// E.g. `cluster.x-k8s.io/v1beta2`.
    #[serde(default)]
    pub api_version: String,
    /// E.g. `Cluster`, `MachineDeployment`, `KubeadmControlPlane`.
    #[serde(default)]
    pub kind: String,
    /// Namespace of the holder.
    #[serde(default)]
    pub namespace: String,
    /// Name of the holder.
    #[serde(default)]
    pub name: String,
    /// E.g. `spec.infrastructureRef` or `spec.template.spec.bootstrap.configRef`.
    #[serde(default)]
    pub field_path: String,
}

/// A template to patch.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePatchesRequestItem {
    /// Random per reconcile; echo it in the response item.
    #[serde(default)]
    pub uid: String,
    /// Where the template is used.
    #[serde(default)]
    pub holder_reference: HolderReference,
    /// The template object (in the apiVersion the ClusterClass references), kept as the text
    /// CAPI sent until it is read.
    #[serde(default)]
    pub object: TemplateObject,
    /// Template-specific variables (overrides and the scoped `builtin`).
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variables: Vec<Variable>,
}

request_type! {
    /// Asks for patches to the templates of a Cluster's topology.
    GeneratePatchesRequest [subject = |r| builtin_cluster_key(&r.variables)] {
        /// Global variables: the user variables this patch declared, then `builtin`.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub variables: Vec<Variable>,
        /// The templates to patch.
        #[serde(default, deserialize_with = "crate::decode::null_default")]
        pub items: Vec<GeneratePatchesRequestItem>,
    }
}

/// One patch for one request item.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GeneratePatchesResponseItem {
    /// The uid of the request item.
    pub uid: String,
    /// The patch (base64 on the wire).
    pub patch: Patch,
}

impl Serialize for GeneratePatchesResponseItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("GeneratePatchesResponseItem", 3)?;
        s.serialize_field("uid", &self.uid)?;
        s.serialize_field("patchType", &self.patch.patch_type())?;
        s.serialize_field(
            "patch",
            &base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                self.patch.document(),
            ),
        )?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for GeneratePatchesResponseItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire {
            #[serde(default)]
            uid: String,
            patch_type: super::PatchType,
            #[serde(default, with = "super::patch::base64_bytes")]
            patch: Option<Vec<u8>>,
        }
        let wire = Wire::deserialize(deserializer)?;
        let bytes = wire
            .patch
            .ok_or_else(|| D::Error::custom(format!("item {}: missing patch", wire.uid)))?;
        let patch = Patch::from_document(wire.patch_type, &bytes).map_err(|e| {
            D::Error::custom(format!(
                "item {}: patch is not a valid {:?} document: {e}",
                wire.uid, wire.patch_type
            ))
        })?;
        Ok(GeneratePatchesResponseItem {
            uid: wire.uid,
            patch,
        })
    }
}

response_type! {
    /// The patches, applied by CAPI in list order.
    GeneratePatchesResponse {
        /// One entry per patched item.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub items: Vec<GeneratePatchesResponseItem>,
    }
}

impl GeneratePatchesResponse {
    /// Adds a patch for the request item with this uid.
    ///
    /// ```
    /// use capi_ext::hooks::v1alpha1::*;
    /// let response = GeneratePatchesResponse::success()
    ///     .patch("uid-1", Patch::json().add("/spec/template/spec/replicas", 3));
    /// assert_eq!(response.items.len(), 1);
    /// ```
    pub fn patch(mut self, uid: impl Into<String>, patch: Patch) -> Self {
        self.items.push(GeneratePatchesResponseItem {
            uid: uid.into(),
            patch,
        });
        self
    }
}

/// A template to validate (as patched by all patches).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidateTopologyRequestItem {
    /// Where the template is used.
    #[serde(default)]
    pub holder_reference: HolderReference,
    /// The patched template object, kept as the text CAPI sent until it is read.
    #[serde(default)]
    pub object: TemplateObject,
    /// Template-specific variables.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variables: Vec<Variable>,
}

request_type! {
    /// Asks whether the patched topology is valid.
    ValidateTopologyRequest [subject = |r| builtin_cluster_key(&r.variables)] {
        /// Global variables.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub variables: Vec<Variable>,
        /// The patched templates.
        #[serde(default, deserialize_with = "crate::decode::null_default")]
        pub items: Vec<ValidateTopologyRequestItem>,
    }
}

response_type! {
    /// `Success` accepts the topology; `Failure` rejects it with the message.
    ValidateTopologyResponse {}
}

request_type! {
    /// Asks which ClusterClass variables the extension's patches use.
    DiscoverVariablesRequest {}
}

response_type! {
    /// The variables the extension declares.
    DiscoverVariablesResponse {
        /// Variable definitions (v1beta2 `ClusterClassVariable` from CAPI 1.13 on).
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub variables: Vec<ClusterClassVariable>,
    }
}

impl DiscoverVariablesResponse {
    /// Adds a variable definition.
    pub fn variable(mut self, variable: ClusterClassVariable) -> Self {
        self.variables.push(variable);
        self
    }
}
