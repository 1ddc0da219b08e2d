//! In-place update hooks: CanUpdateMachine, CanUpdateMachineSet, UpdateMachine (CAPI ≥ 1.12).

use super::Patch;
use super::common::{request_type, response_type};
use crate::objects::{Machine, MachineSet};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A Machine with its infrastructure machine and bootstrap config.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineObjects {
    /// The Machine (`cluster.x-k8s.io/v1beta2`; metadata reduced to name, namespace, labels, annotations).
    #[serde(default)]
    pub machine: Machine,
    /// The infrastructure machine, as raw JSON.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub infrastructure_machine: Value,
    /// The bootstrap config, as raw JSON (absent when the Machine has none).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub bootstrap_config: Value,
}

/// A MachineSet with its templates.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetObjects {
    /// The MachineSet.
    #[serde(default)]
    pub machine_set: MachineSet,
    /// The infrastructure machine template, as raw JSON.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub infrastructure_machine_template: Value,
    /// The bootstrap config template, as raw JSON.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub bootstrap_config_template: Value,
}

request_type! {
    /// Asks whether the extension can move a Machine from `current` to `desired` in place.
    CanUpdateMachineRequest [subject = |r| Some(r.desired.machine.key())] {
        /// The objects as they are.
        #[serde(default)]
        pub current: MachineObjects,
        /// The objects as they should be.
        #[serde(default)]
        pub desired: MachineObjects,
    }
}

response_type! {
    /// Patches to `current` describing the changes the extension can apply in place.
    CanUpdateMachineResponse {
        /// Patch to the Machine.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub machine_patch: Option<Patch>,
        /// Patch to the infrastructure machine.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub infrastructure_machine_patch: Option<Patch>,
        /// Patch to the bootstrap config.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub bootstrap_config_patch: Option<Patch>,
        /// Whether applying these changes in place makes the Machine unavailable while it
        /// happens (Cluster API 1.15+, which reads an absent value as `true`; older releases
        /// ignore it). Unproven until the conformance suite runs Cluster API 1.15.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub affects_availability: Option<bool>,
    }
}

request_type! {
    /// Asks whether the extension can move a MachineSet's machines from `current` to `desired` in place.
    CanUpdateMachineSetRequest [subject = |r| Some(r.desired.machine_set.key())] {
        /// The objects as they are.
        #[serde(default)]
        pub current: MachineSetObjects,
        /// The objects as they should be.
        #[serde(default)]
        pub desired: MachineSetObjects,
    }
}

response_type! {
    /// Patches to `current` describing the changes the extension can apply in place.
    CanUpdateMachineSetResponse {
        /// Patch to the MachineSet.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub machine_set_patch: Option<Patch>,
        /// Patch to the infrastructure machine template.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub infrastructure_machine_template_patch: Option<Patch>,
        /// Patch to the bootstrap config template.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub bootstrap_config_template_patch: Option<Patch>,
        /// Whether applying these changes in place makes the Machine unavailable while it
        /// happens (Cluster API 1.15+, which reads an absent value as `true`; older releases
        /// ignore it). Unproven until the conformance suite runs Cluster API 1.15.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub affects_availability: Option<bool>,
    }
}

request_type! {
    /// Asks the extension to update a Machine in place; polled until `retryAfterSeconds` is 0.
    UpdateMachineRequest [subject = |r| Some(r.desired.machine.key())] {
        /// The objects as they should be.
        #[serde(default)]
        pub desired: MachineObjects,
    }
}

response_type! {
    /// `Success` + `retryAfterSeconds > 0` = in progress; `Success` + 0 = done; `Failure` = failed.
    UpdateMachineResponse retry {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affects_availability_is_sent_only_when_set_and_read_when_present() {
        let mut response = CanUpdateMachineSetResponse::success();
        assert!(
            !serde_json::to_string(&response)
                .unwrap()
                .contains("affectsAvailability")
        );
        response.affects_availability = Some(false);
        assert!(
            serde_json::to_string(&response)
                .unwrap()
                .contains(r#""affectsAvailability":false"#)
        );
        let read: CanUpdateMachineResponse =
            serde_json::from_str(r#"{"status":"Success","affectsAvailability":true}"#).unwrap();
        assert_eq!(read.affects_availability, Some(true));
    }
}
