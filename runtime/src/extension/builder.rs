//! The builder of an [`Extension`]: the state, the registrations, the target version, and the
//! checks CAPI makes of a Discovery answer, run once when the extension is built.

use super::registration::{HookHandler, Registration};
use super::{DEFAULT_TIMEOUT_SECONDS, Extension, Inner, Route};
use crate::gates::Gates;
use crate::hooks::v1alpha1::{
    API_VERSION, DiscoveryResponse, ExtensionHandler, GroupVersionHook, Hook, IntoHookResponse,
    RetryResponse,
};
use crate::patches::PatchSet;
use capi_ext_codegen::naming;
use capi_ext_codegen::version::CapiVersion;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Every problem found in a set of registrations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrationError {
    /// One line per problem, naming the handler and hook.
    pub problems: Vec<String>,
}

impl fmt::Display for RegistrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid handler registrations:")?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistrationError {}

/// Collects registrations; [`ExtensionBuilder::build`] checks them all at once. `S` is the
/// state handlers may take ([`ExtensionBuilder::state`]); `()` until one is given.
pub struct ExtensionBuilder<S = ()> {
    pub(super) registrations: Vec<Registration<S>>,
    pub(super) target: CapiVersion,
    pub(super) state: S,
}

impl ExtensionBuilder<()> {
    /// Gives the extension its state: handlers take it, or a part of it, as their first
    /// argument `State<T>` (see [`State`](crate::State)). Given once; handlers registered
    /// before it keep working (they take no state).
    ///
    /// ```
    /// use capi_ext::hooks::v1alpha1::*;
    /// use capi_ext::{Extension, State, hook};
    /// use std::sync::Arc;
    ///
    /// struct Quota { max_clusters: usize }
    ///
    /// #[hook(BeforeClusterCreate)]
    /// async fn quota(State(quota): State<Arc<Quota>>, _req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    ///     let _ = quota.max_clusters;
    ///     BeforeClusterCreateResponse::success()
    /// }
    ///
    /// let extension = Extension::builder()
    ///     .state(Arc::new(Quota { max_clusters: 10 }))
    ///     .register::<quota>()
    ///     .build()
    ///     .unwrap();
    /// # let _ = extension;
    /// ```
    pub fn state<S: Send + Sync + 'static>(self, state: S) -> ExtensionBuilder<S> {
        ExtensionBuilder {
            registrations: self
                .registrations
                .into_iter()
                .map(Registration::for_state)
                .collect(),
            target: self.target,
            state,
        }
    }
}

impl<S: Send + Sync + 'static> ExtensionBuilder<S> {
    /// Adds a handler.
    pub fn handler(mut self, registration: Registration<S>) -> Self {
        self.registrations.push(registration);
        self
    }

    /// Adds a handler declared with `#[hook(...)]`: `.register::<before_create>()`.
    pub fn register<H: HookHandler<S>>(self) -> Self {
        self.handler(H::registration())
    }

    /// Answers GeneratePatches with handler `name` from a [`PatchSet`], built and checked once
    /// (`Registration::patches` when the handler needs a timeout or a failure policy).
    pub fn patches<V>(self, name: &str, set: PatchSet<V>) -> Self
    where
        V: DeserializeOwned + Send + Sync + 'static,
    {
        self.handler(Registration::patches(name, set))
    }

    /// Answers the blocking lifecycle hook `hook` with handler `name` from [`Gates`], built
    /// once (`Registration::gates` when the handler needs a timeout or a failure policy).
    pub fn gates<H>(self, hook: H, name: &str, gates: Gates<H::Request, H::Response>) -> Self
    where
        H: Hook,
        H::Request: Clone + Send + Sync + 'static,
        H::Response: RetryResponse + IntoHookResponse<H::Response> + Send + 'static,
    {
        self.handler(Registration::gates(hook, name, gates))
    }

    /// Answers DiscoverVariables with handler `name` from a `#[derive(Variables)]` type.
    pub fn variables<V: crate::schema::Variables>(self, name: &str) -> Self {
        let definitions = V::definitions();
        self.handler(Registration::new(
            crate::hooks::v1alpha1::DiscoverVariables,
            name,
            move |_req| {
                let variables = definitions.clone();
                async move {
                    crate::hooks::v1alpha1::DiscoverVariablesResponse {
                        variables,
                        ..crate::hooks::v1alpha1::DiscoverVariablesResponse::success()
                    }
                }
            },
        ))
    }

    /// The Cluster API version the extension targets (default 1.14): handlers of hooks that
    /// version does not know are neither advertised nor served, because one unknown hook
    /// fails the Discovery of the whole extension.
    pub fn target(mut self, version: CapiVersion) -> Self {
        self.target = version;
        self
    }

    /// Checks the registrations (DNS-1123 names, unique names, timeouts in 0..=30, no
    /// Discovery handler) and builds the extension. All problems are reported together.
    pub fn build(self) -> Result<Extension, RegistrationError> {
        let state = self.state;
        let mut problems = Vec::new();
        let mut routes = HashMap::new();
        let mut handlers = Vec::new();
        let mut skipped = Vec::new();
        let mut seen = HashMap::<String, &'static str>::new();
        for reg in self.registrations {
            let what = format!("handler `{}` ({})", reg.name, reg.hook.name);
            if reg.hook.singleton {
                problems.push(format!("{what}: Discovery is answered by the runtime from the registrations; do not register it"));
                continue;
            }
            if let Err(e) = naming::validate_dns_label(&reg.name) {
                problems.push(format!("{what}: {e}"));
            }
            if let Some(previous) = seen.insert(reg.name.clone(), reg.hook.name) {
                problems.push(format!(
                    "{what}: the name is already used by a {previous} handler; handler names must be unique within an extension"
                ));
            }
            let timeout = match reg
                .timeout_seconds
                .map(naming::validate_timeout)
                .transpose()
            {
                Ok(t) => t.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
                Err(e) => {
                    problems.push(format!("{what}: {e}"));
                    continue;
                }
            };
            if !reg.hook.known_by(self.target) {
                skipped.push(format!(
                    "{what}: {} was introduced in Cluster API {}, the extension targets {}; not advertised",
                    reg.hook.name, reg.hook.since, self.target
                ));
                continue;
            }
            handlers.push(ExtensionHandler {
                name: reg.name.clone(),
                request_hook: GroupVersionHook {
                    api_version: API_VERSION.to_string(),
                    hook: reg.hook.name.to_string(),
                },
                timeout_seconds: Some(timeout),
                failure_policy: Some(reg.failure_policy),
            });
            let effective_timeout = if timeout == 0 {
                DEFAULT_TIMEOUT_SECONDS
            } else {
                timeout
            };
            routes.insert(
                reg.hook.path(&reg.name),
                Route {
                    hook: reg.hook,
                    name: reg.name,
                    timeout: Duration::from_secs(effective_timeout as u64),
                    handler: (reg.bind)(&state),
                },
            );
        }
        if !problems.is_empty() {
            return Err(RegistrationError { problems });
        }
        for s in &skipped {
            tracing::warn!("{s}");
        }
        let discovery = DiscoveryResponse {
            handlers: handlers.clone(),
            ..DiscoveryResponse::success()
        };
        let discovery_body = serde_json::to_vec(&discovery).expect("discovery always serializes");
        Ok(Extension {
            inner: Arc::new(Inner {
                routes,
                handlers,
                skipped,
                discovery_body,
                target: self.target,
            }),
        })
    }
}
