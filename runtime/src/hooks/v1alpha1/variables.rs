//! Variables: values passed to topology hooks, builtin variables, and variable definitions
//! (ClusterClassVariable with its OpenAPI schema subset).

use super::{LazyValue, ObjectMeta};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A named variable value passed to GeneratePatches and ValidateTopology.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Variable {
    /// Variable name (`builtin` for the builtin variables).
    #[serde(default)]
    pub name: String,
    /// Any JSON value, kept as the text CAPI sent until it is read (a [`LazyValue`] reads as a
    /// `Value`; [`LazyValue::decode`] reads a type straight from the text).
    #[serde(default)]
    pub value: LazyValue,
}

/// The value of the `builtin` variable. The global variable carries only `cluster`; item
/// variables carry only the key of their scope.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Builtins {
    /// Cluster builtins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterBuiltins>,
    /// Control plane builtins (control plane templates only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<ControlPlaneBuiltins>,
    /// MachineDeployment builtins (MachineDeployment templates only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_deployment: Option<MachineDeploymentBuiltins>,
    /// MachinePool builtins (MachinePool templates only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_pool: Option<MachinePoolBuiltins>,
}

impl Builtins {
    /// These builtins with the fields they lack taken from `other`: the deep merge of two
    /// `builtin` values whose keys do not overlap (CAPI's global `cluster` beside an item's
    /// `controlPlane`, `machineDeployment` or `machinePool`).
    pub fn or(self, other: &Builtins) -> Builtins {
        let Builtins {
            cluster,
            control_plane,
            machine_deployment,
            machine_pool,
        } = self;
        Builtins {
            cluster: cluster.or_else(|| other.cluster.clone()),
            control_plane: control_plane.or_else(|| other.control_plane.clone()),
            machine_deployment: machine_deployment.or_else(|| other.machine_deployment.clone()),
            machine_pool: machine_pool.or_else(|| other.machine_pool.clone()),
        }
    }
}

/// `builtin.cluster`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterBuiltins {
    /// Cluster name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Cluster namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Cluster uid.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// Cluster labels and annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<ClusterTopologyBuiltins>,
    /// Network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<ClusterNetworkBuiltins>,
}

/// `builtin.cluster.topology`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterTopologyBuiltins {
    /// `spec.topology.version`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The ClusterClass.
    #[serde(default)]
    pub class_ref: ClusterClassRefBuiltins,
    /// Deprecated duplicate of `classRef.name`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub class: String,
    /// Deprecated duplicate of `classRef.namespace`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub class_namespace: String,
}

/// `builtin.cluster.topology.classRef`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClusterClassRefBuiltins {
    /// ClusterClass name.
    #[serde(default)]
    pub name: String,
    /// ClusterClass namespace.
    #[serde(default)]
    pub namespace: String,
}

/// `builtin.cluster.network`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterNetworkBuiltins {
    /// Service domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_domain: Option<String>,
    /// Service CIDRs.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub services: Vec<String>,
    /// Pod CIDRs.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub pods: Vec<String>,
}

/// `builtin.controlPlane`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneBuiltins {
    /// Version the control plane is reconciled to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Control plane labels and annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// Control plane object name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Replicas, when set in the topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// The machine template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_template: Option<ControlPlaneMachineTemplateBuiltins>,
}

/// `builtin.controlPlane.machineTemplate`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlaneMachineTemplateBuiltins {
    /// The infrastructure machine template.
    #[serde(default)]
    pub infrastructure_ref: NameBuiltin,
}

/// A `{name}` object used by several builtins.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NameBuiltin {
    /// Object name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

/// `builtin.machineDeployment` and `builtin.machinePool`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineDeploymentBuiltins {
    /// Kubernetes version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Labels and annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// The topology class.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub class: String,
    /// The object name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The name in the Cluster topology.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub topology_name: String,
    /// Replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    /// The bootstrap config template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<MachineBootstrapBuiltins>,
    /// The infrastructure machine template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infrastructure_ref: Option<NameBuiltin>,
}

/// `builtin.machinePool` has the shape of [`MachineDeploymentBuiltins`].
pub type MachinePoolBuiltins = MachineDeploymentBuiltins;

/// `builtin.machineDeployment.bootstrap`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineBootstrapBuiltins {
    /// The bootstrap config template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_ref: Option<NameBuiltin>,
}

/// A variable definition returned by DiscoverVariables (CAPI's v1beta2 `ClusterClassVariable`).
///
/// ```
/// use capi_ext::hooks::v1alpha1::*;
///
/// let var = ClusterClassVariable::new("imageRepository", true, JSONSchemaProps::string().with_description("Registry"));
/// let json = serde_json::to_value(&var).unwrap();
/// assert_eq!(json["required"], true);
/// assert_eq!(json["schema"]["openAPIV3Schema"]["type"], "string");
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassVariable {
    /// Variable name: not `builtin`, no `.`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Whether the Cluster must set it. Always send it: the ClusterClass status requires it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Deprecated v1beta1 metadata.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "deprecatedV1Beta1Metadata"
    )]
    pub deprecated_v1beta1_metadata: Option<ObjectMeta>,
    /// The same labels and annotations as Cluster API before 1.13 names them (its v1beta1
    /// `ClusterClassVariable.metadata`); found missing by the round trip through CAPI 1.12's types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ObjectMeta>,
    /// The schema.
    #[serde(default)]
    pub schema: VariableSchema,
}

impl ClusterClassVariable {
    /// A definition with its name, requiredness and schema.
    pub fn new(name: impl Into<String>, required: bool, schema: JSONSchemaProps) -> Self {
        ClusterClassVariable {
            name: name.into(),
            required: Some(required),
            deprecated_v1beta1_metadata: None,
            metadata: None,
            schema: VariableSchema {
                open_api_v3_schema: schema,
            },
        }
    }
}

/// `schema` of a variable definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VariableSchema {
    /// The OpenAPI v3 schema (CAPI's subset).
    #[serde(default, rename = "openAPIV3Schema")]
    pub open_api_v3_schema: JSONSchemaProps,
}

/// The OpenAPI v3 schema subset CAPI accepts for variables.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::upper_case_acronyms)]
pub struct JSONSchemaProps {
    /// Description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Example value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
    /// `object`, `array`, `string`, `integer`, `number` or `boolean`.
    #[serde(default, skip_serializing_if = "String::is_empty", rename = "type")]
    pub type_: String,
    /// Object properties.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub properties: BTreeMap<String, JSONSchemaProps>,
    /// Schema of map values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<Box<JSONSchemaProps>>,
    /// Maximum number of properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<i64>,
    /// Minimum number of properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<i64>,
    /// Required properties.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub required: Vec<String>,
    /// Schema of array items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<JSONSchemaProps>>,
    /// Maximum number of items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<i64>,
    /// Minimum number of items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<i64>,
    /// Items must be unique.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique_items: Option<bool>,
    /// Format, e.g. `uri`, `date-time`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub format: String,
    /// Maximum string length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
    /// Minimum string length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<i64>,
    /// Regular expression.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pattern: String,
    /// Maximum (integers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i64>,
    /// Whether the maximum is exclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusive_maximum: Option<bool>,
    /// Minimum (integers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i64>,
    /// Whether the minimum is exclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusive_minimum: Option<bool>,
    /// Keep unknown fields.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "x-kubernetes-preserve-unknown-fields"
    )]
    pub x_preserve_unknown_fields: Option<bool>,
    /// Allowed values.
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "enum")]
    pub enum_: Vec<Value>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// CEL validation rules.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        rename = "x-kubernetes-validations"
    )]
    pub x_validations: Vec<ValidationRule>,
    /// Labels and annotations for this schema.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "x-metadata"
    )]
    pub x_metadata: Option<ObjectMeta>,
    /// Int or string.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "x-kubernetes-int-or-string"
    )]
    pub x_int_or_string: Option<bool>,
    /// All of.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub all_of: Vec<JSONSchemaProps>,
    /// One of.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub one_of: Vec<JSONSchemaProps>,
    /// Any of.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub any_of: Vec<JSONSchemaProps>,
    /// Not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not: Option<Box<JSONSchemaProps>>,
}

impl JSONSchemaProps {
    fn typed(type_: &str) -> Self {
        JSONSchemaProps {
            type_: type_.to_string(),
            ..Default::default()
        }
    }
    /// `type: string`.
    pub fn string() -> Self {
        Self::typed("string")
    }
    /// `type: integer`.
    pub fn integer() -> Self {
        Self::typed("integer")
    }
    /// `type: number`.
    pub fn number() -> Self {
        Self::typed("number")
    }
    /// `type: boolean`.
    pub fn boolean() -> Self {
        Self::typed("boolean")
    }
    /// `type: array` with item schema.
    pub fn array(items: JSONSchemaProps) -> Self {
        JSONSchemaProps {
            items: Some(Box::new(items)),
            ..Self::typed("array")
        }
    }
    /// `type: object` with properties and the required ones.
    pub fn object(
        properties: impl IntoIterator<Item = (String, JSONSchemaProps)>,
        required: &[&str],
    ) -> Self {
        JSONSchemaProps {
            properties: properties.into_iter().collect(),
            required: required.iter().map(|s| s.to_string()).collect(),
            ..Self::typed("object")
        }
    }
    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }
    /// Sets the default.
    pub fn with_default(mut self, default: Value) -> Self {
        self.default = Some(default);
        self
    }
    /// Adds a CEL rule with its message.
    pub fn with_rule(mut self, rule: impl Into<String>, message: impl Into<String>) -> Self {
        self.x_validations.push(ValidationRule {
            rule: rule.into(),
            message: message.into(),
            ..Default::default()
        });
        self
    }
}

/// A CEL validation rule (`x-kubernetes-validations`): the rule `#[derive(Variables)]` writes.
pub use capi_ext_codegen::schema::Rule as ValidationRule;
