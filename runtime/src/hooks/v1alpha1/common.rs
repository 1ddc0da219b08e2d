//! Types shared by every hook: status, failure policy, settings and the response traits.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Settings passed to a hook: the ExtensionConfig's `spec.settings` overlaid with the
/// ClusterClass patch's `external.settings` (topology hooks). Omitted on the wire when empty.
pub type Settings = BTreeMap<String, String>;

/// The outcome of a hook call. CAPI accepts exactly `Success` or `Failure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResponseStatus {
    /// The call succeeded (a blocking hook may still ask to be called again later).
    Success,
    /// The call failed; CAPI surfaces the message and retries the reconcile.
    Failure,
}

impl ResponseStatus {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            ResponseStatus::Success => "Success",
            ResponseStatus::Failure => "Failure",
        }
    }
}

/// What CAPI does when a call to a handler fails at the transport level
/// (connection error, timeout, non-200 answer, undecodable body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum FailurePolicy {
    /// Treat the failed call as a success and go on.
    Ignore,
    /// Fail the reconcile and retry it (CAPI's default).
    #[default]
    Fail,
}

impl FailurePolicy {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Ignore => "Ignore",
            FailurePolicy::Fail => "Fail",
        }
    }
}

impl std::str::FromStr for FailurePolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "Ignore" => Ok(FailurePolicy::Ignore),
            "Fail" => Ok(FailurePolicy::Fail),
            other => Err(format!(
                "unknown failure policy `{other}`: expected `Fail` or `Ignore`"
            )),
        }
    }
}

/// Labels and annotations, as carried by builtin variables and `x-metadata`
/// (CAPI's hooks `ObjectMeta`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ObjectMeta {
    /// Labels.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub annotations: BTreeMap<String, String>,
}

/// Behaviour shared by every hook response.
pub trait HookResponse: Serialize + serde::de::DeserializeOwned + Send + 'static {
    /// A response with `status: Success`.
    fn success() -> Self;
    /// A response with `status: Failure` and a message. Keep messages deterministic:
    /// they end up in Cluster conditions, and changing text causes reconcile storms.
    fn failure(message: impl Into<String>) -> Self;
    /// The response's status.
    fn status(&self) -> ResponseStatus;
    /// The response's message (empty when none).
    fn message(&self) -> &str;
    /// Sets the message.
    fn with_message(self, message: impl Into<String>) -> Self;
}

/// Responses of blocking hooks, which always carry `retryAfterSeconds`.
pub trait RetryResponse: HookResponse {
    /// Asks CAPI to call again after `seconds` (0 = do not block).
    fn retry_after(self, seconds: i32) -> Self;
    /// The requested delay (0 = not blocking).
    fn retry_after_seconds(&self) -> i32;
}

/// Converts what a handler returns into its hook's response: the response itself, or a
/// `Result` whose error becomes `status: Failure` with the error's message.
pub trait IntoHookResponse<R> {
    /// The response to send.
    fn into_hook_response(self) -> R;
}

/// Declares a response type with `status`, `message` and extra fields, and implements the
/// response traits for it. `retry` before the braces adds `retryAfterSeconds` (always sent).
macro_rules! response_type {
    (
        $(#[$meta:meta])*
        $name:ident retry { $($fields:tt)* }
    ) => {
        $crate::hooks::v1alpha1::common::response_type! {
            $(#[$meta])*
            $name {
                /// Seconds after which CAPI should call again; 0 means "not blocking". Always sent.
                #[serde(default)]
                pub retry_after_seconds: i32,
                $($fields)*
            }
        }

        impl $crate::hooks::v1alpha1::RetryResponse for $name {
            fn retry_after(mut self, seconds: i32) -> Self {
                self.retry_after_seconds = seconds.max(0);
                self
            }
            fn retry_after_seconds(&self) -> i32 {
                self.retry_after_seconds
            }
        }

        impl $name {
            /// Asks CAPI to call again after `seconds` (blocking); 0 unblocks. Negative values become 0.
            pub fn retry_after(self, seconds: i32) -> Self {
                <Self as $crate::hooks::v1alpha1::RetryResponse>::retry_after(self, seconds)
            }
        }
    };
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// `hooks.runtime.cluster.x-k8s.io/v1alpha1` (CAPI ignores it; sent for readability).
            #[serde(default, skip_serializing_if = "String::is_empty")]
            pub api_version: String,
            /// The response kind (CAPI ignores it; sent for readability).
            #[serde(default, skip_serializing_if = "String::is_empty")]
            pub kind: String,
            /// `Success` or `Failure`; always sent.
            pub status: $crate::hooks::v1alpha1::ResponseStatus,
            /// Human-readable message; omitted when empty.
            #[serde(default, skip_serializing_if = "String::is_empty")]
            pub message: String,
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $crate::hooks::v1alpha1::HookResponse for $name {
            fn success() -> Self {
                Self::with_status($crate::hooks::v1alpha1::ResponseStatus::Success, String::new())
            }
            fn failure(message: impl Into<String>) -> Self {
                Self::with_status($crate::hooks::v1alpha1::ResponseStatus::Failure, message.into())
            }
            fn status(&self) -> $crate::hooks::v1alpha1::ResponseStatus {
                self.status
            }
            fn message(&self) -> &str {
                &self.message
            }
            fn with_message(mut self, message: impl Into<String>) -> Self {
                self.message = message.into();
                self
            }
        }

        impl $name {
            fn with_status(status: $crate::hooks::v1alpha1::ResponseStatus, message: String) -> Self {
                $name {
                    api_version: $crate::hooks::v1alpha1::API_VERSION.to_string(),
                    kind: stringify!($name).to_string(),
                    status,
                    message,
                    $( $field: Default::default(), )*
                }
            }

            /// A response with `status: Success`.
            pub fn success() -> Self {
                <Self as $crate::hooks::v1alpha1::HookResponse>::success()
            }

            /// A response with `status: Failure` and a message. Keep it deterministic: CAPI
            /// copies it into conditions.
            pub fn failure(message: impl Into<String>) -> Self {
                <Self as $crate::hooks::v1alpha1::HookResponse>::failure(message)
            }

            /// Sets the message.
            pub fn with_message(self, message: impl Into<String>) -> Self {
                <Self as $crate::hooks::v1alpha1::HookResponse>::with_message(self, message)
            }
        }

        impl $crate::hooks::v1alpha1::IntoHookResponse<$name> for $name {
            fn into_hook_response(self) -> $name {
                self
            }
        }

        impl<E: std::fmt::Display> $crate::hooks::v1alpha1::IntoHookResponse<$name> for Result<$name, E> {
            fn into_hook_response(self) -> $name {
                match self {
                    Ok(response) => response,
                    Err(err) => <$name as $crate::hooks::v1alpha1::HookResponse>::failure(err.to_string()),
                }
            }
        }
    };
}

pub(crate) use response_type;

/// Behaviour shared by every hook request.
pub trait HookRequest: Serialize + serde::de::DeserializeOwned + Send + 'static {
    /// The request's `apiVersion` as received (empty when absent).
    fn api_version(&self) -> &str;
    /// The request's `kind` as received (empty when absent).
    fn kind(&self) -> &str;
    /// The settings CAPI passed (empty for Discovery).
    fn settings(&self) -> &Settings;
    /// `namespace/name` of the object the call is about (Cluster or Machine), for logs.
    fn subject(&self) -> Option<String>;
}

/// Declares a request type with `apiVersion`, `kind`, `settings` and extra fields.
macro_rules! request_type {
    (
        $(#[$meta:meta])*
        $name:ident $( [subject = |$r:ident| $subject:expr] )? {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// Always `hooks.runtime.cluster.x-k8s.io/v1alpha1` when sent by CAPI.
            #[serde(default, skip_serializing_if = "String::is_empty")]
            pub api_version: String,
            /// The request kind, e.g. `BeforeClusterCreateRequest`.
            #[serde(default, skip_serializing_if = "String::is_empty")]
            pub kind: String,
            /// ExtensionConfig settings, overlaid with ClusterClass patch settings for topology hooks.
            #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "std::collections::BTreeMap::is_empty")]
            pub settings: $crate::hooks::v1alpha1::Settings,
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $crate::hooks::v1alpha1::HookRequest for $name {
            fn api_version(&self) -> &str {
                &self.api_version
            }
            fn kind(&self) -> &str {
                &self.kind
            }
            fn settings(&self) -> &$crate::hooks::v1alpha1::Settings {
                &self.settings
            }
            #[allow(unreachable_code)]
            fn subject(&self) -> Option<String> {
                $( let $r = self; return $subject; )?
                None
            }
        }

        impl $name {
            /// An empty request with `apiVersion` and `kind` set as CAPI sets them.
            pub fn new() -> Self {
                $name {
                    api_version: $crate::hooks::v1alpha1::API_VERSION.to_string(),
                    kind: stringify!($name).to_string(),
                    ..Default::default()
                }
            }
        }
    };
}

pub(crate) use request_type;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_exact_case() {
        assert!(serde_json::from_str::<ResponseStatus>("\"success\"").is_err());
        assert_eq!(
            serde_json::from_str::<ResponseStatus>("\"Failure\"").unwrap(),
            ResponseStatus::Failure
        );
        assert_eq!("Ignore".parse::<FailurePolicy>(), Ok(FailurePolicy::Ignore));
        assert!(
            "ignore"
                .parse::<FailurePolicy>()
                .unwrap_err()
                .contains("`Fail` or `Ignore`")
        );
    }
}
