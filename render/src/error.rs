//! Why a render stopped, as values a caller can match (never by their text).

use crate::caller::CallError;
use crate::values;

/// Why a render stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// The Cluster, ClusterClass or templates are not what render needs.
    #[error("{0}")]
    Input(String),
    /// The ClusterClass's variable definitions conflict (what CAPI's ClusterClass controller
    /// reports as `VariablesReady=False`).
    #[error("{0}")]
    Definitions(String),
    /// CAPI cannot compute the Kubernetes versions of an upgrade (an upgrade plan it cannot
    /// make or that breaks its rules); the topology controller fails every reconcile.
    #[error("the upgrade cannot go on (CAPI's topology controller would fail the reconcile): {0}")]
    Upgrade(String),
    /// The Cluster's variable values break their definitions (what the Cluster webhook rejects).
    #[error("the Cluster's variables are invalid (CAPI's webhook would reject the Cluster):\n  {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  "))]
    Variables(Vec<values::FieldError>),
    /// The extension could not be called or answered something CAPI cannot use.
    #[error("{hook} `{handler}` ({}): {error}", served(patch))]
    Call {
        /// The hook.
        hook: &'static str,
        /// The handler.
        handler: String,
        /// The ClusterClass patch ("" for GenerateUpgradePlan, which serves the class's upgrades).
        patch: String,
        /// Why no usable answer came.
        error: CallError,
    },
    /// The extension answered `Failure` (for ValidateTopology: the topology is rejected).
    #[error("{hook} `{handler}` ({}) answered Failure: {message}", served(patch))]
    Failure {
        /// The hook.
        hook: &'static str,
        /// The handler.
        handler: String,
        /// The ClusterClass patch ("" for GenerateUpgradePlan, which serves the class's upgrades).
        patch: String,
        /// The extension's message.
        message: String,
    },
    /// An inline patch of the ClusterClass cannot be generated (CAPI fails the reconcile).
    #[error("ClusterClass spec.patches[{index}] ({patch}): {message}")]
    Inline {
        /// The patch's name.
        patch: String,
        /// Its index in `spec.patches`.
        index: usize,
        /// What went wrong.
        message: String,
    },
    /// The extension answered the same request differently: CAPI calls on every reconcile, so
    /// an answer that changes makes it churn (patches rotate templates, messages land in the
    /// Cluster's conditions).
    #[error("{} `{}` ({}) is not deterministic: {} changed {} from {} to {}", .0.hook, .0.handler, served(&.0.patch), .0.what, .0.field, .0.first, .0.second)]
    Nondeterministic(Box<Nondeterminism>),
    /// The extension's message holds something that changes from call to call (a time, a
    /// UUID): CAPI writes messages into the Cluster's conditions, so it would rewrite them on
    /// every reconcile.
    #[error(
        "{hook} `{handler}` ({}) answered a message with {what} in it (`{part}`): CAPI writes extension messages into the Cluster's conditions, so one that changes on every call rewrites them on every reconcile; leave times and random parts out of messages (log them instead)",
        served(patch)
    )]
    VolatileMessage {
        /// The hook.
        hook: &'static str,
        /// The handler.
        handler: String,
        /// The ClusterClass patch ("" for GenerateUpgradePlan, which serves the class's upgrades).
        patch: String,
        /// What it looks like (`a timestamp`, `a UUID`…).
        what: &'static str,
        /// The part of the message.
        part: String,
    },
    /// A returned patch cannot be applied (CAPI fails the reconcile the same way).
    #[error("patch {patch}: cannot apply the patch for item {uid} ({kind}): {message}")]
    Patch {
        /// The ClusterClass patch ("" for GenerateUpgradePlan, which serves the class's upgrades).
        patch: String,
        /// The item's uid.
        uid: String,
        /// The item's kind.
        kind: String,
        /// What went wrong.
        message: String,
    },
    /// A field the CRD of the object's kind does not declare: Cluster API writes its objects
    /// by server-side apply, which the API server refuses (`field not declared in schema`), so
    /// the Cluster stops reconciling; for a schema server-side apply cannot type, and on a plain
    /// create or update, the field is dropped without an error instead.
    #[error("{}{kind} {name} gets {} that its CRD does not declare: the API server refuses Cluster API's server-side apply of {} (`field not declared in schema`) and the Cluster stops reconciling (for a schema server-side apply cannot type, it drops {} without an error); check the name against the CRD", match .patch { Some(p) => format!("patch {p}: "), None => String::new() }, if .pointers.len() == 1 { format!("the field {}", .pointers[0]) } else { format!("the fields {}", .pointers.join(", ")) }, if .pointers.len() == 1 { "it" } else { "them" }, if .pointers.len() == 1 { "it" } else { "them" })]
    Pruned {
        /// The ClusterClass patch that set them (`None`: the template or object as given).
        patch: Option<String>,
        /// The object's kind.
        kind: String,
        /// Its name.
        name: String,
        /// The fields, as JSON pointers.
        pointers: Vec<String>,
    },
    /// The API server would refuse the object (CAPI's apply fails and the Cluster stops
    /// reconciling).
    #[error("the API server would refuse {kind} {name}:\n  {}", .errors.iter().map(|e| format!("{} ({})", e, e.type_.cause())).collect::<Vec<_>>().join("\n  "))]
    Rejected {
        /// The object's kind.
        kind: String,
        /// Its name.
        name: String,
        /// The API server's causes.
        errors: Vec<crate::apiserver::FieldError>,
    },
}

/// What a hook call served, for messages: the ClusterClass patch, or (no patch) the class's
/// upgrade plan.
pub(crate) fn served(patch: &str) -> String {
    if patch.is_empty() {
        "ClusterClass spec.upgrade.external.generateUpgradePlanExtension".into()
    } else {
        format!("patch {patch}")
    }
}

/// The step of CAPI's reconcile a [`RenderError`] stands for: where CAPI would stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Reading the inputs (nothing of CAPI's: the Cluster, ClusterClass or templates given).
    Input,
    /// The ClusterClass's variable definitions (ClusterClass controller, DiscoverVariables).
    VariableDefinitions,
    /// The Cluster's variable values (the Cluster webhook).
    VariableValues,
    /// The upgrade sequence (the versions of an existing Cluster's objects).
    Upgrade,
    /// The extensions' ValidateTopology.
    ValidateTopology,
    /// Generating and applying the patches (inline and GeneratePatches).
    Patches,
    /// Writing the objects (the API server's rules).
    ApiServer,
}

impl Step {
    /// The step's name, as `capi-ext render --json` reports it.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Input => "input",
            Step::VariableDefinitions => "variable definitions",
            Step::VariableValues => "variable values",
            Step::Upgrade => "upgrade",
            Step::ValidateTopology => "ValidateTopology",
            Step::Patches => "patches",
            Step::ApiServer => "API server",
        }
    }
}

impl RenderError {
    /// The step of CAPI's reconcile at which CAPI would stop, as this error stops render.
    ///
    /// ```
    /// use capi_ext_render::{RenderError, Step};
    /// let err = RenderError::Failure {
    ///     hook: "ValidateTopology",
    ///     handler: "validate".into(),
    ///     patch: "p".into(),
    ///     message: "no".into(),
    /// };
    /// assert_eq!(err.step(), Step::ValidateTopology);
    /// assert_eq!(RenderError::Input("x".into()).step().as_str(), "input");
    /// ```
    pub fn step(&self) -> Step {
        let of_hook = |hook: &str| match hook {
            "DiscoverVariables" => Step::VariableDefinitions,
            "ValidateTopology" => Step::ValidateTopology,
            "GenerateUpgradePlan" => Step::Upgrade,
            _ => Step::Patches,
        };
        match self {
            RenderError::Input(_) => Step::Input,
            RenderError::Definitions(_) => Step::VariableDefinitions,
            RenderError::Variables(_) => Step::VariableValues,
            RenderError::Upgrade(_) => Step::Upgrade,
            RenderError::Call { hook, .. } | RenderError::Failure { hook, .. } => of_hook(hook),
            RenderError::VolatileMessage { hook, .. } => of_hook(hook),
            RenderError::Nondeterministic(n) => of_hook(n.hook),
            RenderError::Inline { .. } | RenderError::Patch { .. } => Step::Patches,
            RenderError::Pruned { .. } | RenderError::Rejected { .. } => Step::ApiServer,
        }
    }
}

/// Where an extension answered the same question twice differently.
#[derive(Debug, Clone, PartialEq)]
pub struct Nondeterminism {
    /// The hook.
    pub hook: &'static str,
    /// The handler.
    pub handler: String,
    /// The ClusterClass patch ("" for GenerateUpgradePlan, which serves the class's upgrades).
    pub patch: String,
    /// What was sent again: `the same request` or `the items in reverse order`.
    pub what: &'static str,
    /// Where the answers differ (a JSON pointer into the response, or `the patch of item <uid>`).
    pub field: String,
    /// The first answer there.
    pub first: String,
    /// The second.
    pub second: String,
}
