//! The lifecycle hooks of an upgrade that render can be told block, and what CAPI then does.
//!
//! render never calls lifecycle hooks (they have side effects). By default it goes on as if
//! each answered without `retryAfterSeconds`. [`Input::blocking_hooks`](crate::Input) names the
//! ones that answer with it, so render shows the Cluster as CAPI holds it at that point of an
//! upgrade: the control plane kept at its version, the workers not started, the hook left
//! pending on the Cluster.

use std::fmt;
use std::str::FromStr;

/// A lifecycle hook that CAPI's topology controller calls during an upgrade and that can hold
/// it by answering with `retryAfterSeconds`.
///
/// ```
/// use capi_ext_render::UpgradeHook;
///
/// let hook: UpgradeHook = "AfterControlPlaneUpgrade".parse().unwrap();
/// assert_eq!(hook, UpgradeHook::AfterControlPlaneUpgrade);
/// let wrong = "AfterControlPlaneUpgrad".parse::<UpgradeHook>().unwrap_err();
/// assert!(wrong.contains("did you mean AfterControlPlaneUpgrade?"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UpgradeHook {
    /// Called once, before the first step of an upgrade: holding it keeps the whole Cluster
    /// at its version.
    BeforeClusterUpgrade,
    /// Called before the control plane takes each step of the plan.
    BeforeControlPlaneUpgrade,
    /// Called once the control plane is at a step: holding it keeps the workers (and the next
    /// step) waiting.
    AfterControlPlaneUpgrade,
    /// Called before the workers take a step.
    BeforeWorkersUpgrade,
    /// Called once the workers are at a step: holding it keeps the next step waiting.
    AfterWorkersUpgrade,
}

impl UpgradeHook {
    /// Every hook, in the order CAPI calls them in one step of an upgrade.
    pub const ALL: [UpgradeHook; 5] = [
        UpgradeHook::BeforeClusterUpgrade,
        UpgradeHook::BeforeControlPlaneUpgrade,
        UpgradeHook::AfterControlPlaneUpgrade,
        UpgradeHook::BeforeWorkersUpgrade,
        UpgradeHook::AfterWorkersUpgrade,
    ];

    /// The hook's name, as CAPI's catalog and the pending-hooks annotation spell it.
    pub fn name(self) -> &'static str {
        match self {
            UpgradeHook::BeforeClusterUpgrade => "BeforeClusterUpgrade",
            UpgradeHook::BeforeControlPlaneUpgrade => "BeforeControlPlaneUpgrade",
            UpgradeHook::AfterControlPlaneUpgrade => "AfterControlPlaneUpgrade",
            UpgradeHook::BeforeWorkersUpgrade => "BeforeWorkersUpgrade",
            UpgradeHook::AfterWorkersUpgrade => "AfterWorkersUpgrade",
        }
    }
}

impl fmt::Display for UpgradeHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for UpgradeHook {
    type Err = String;

    /// The hook of that name; an unknown name is an error listing the hooks that can block an
    /// upgrade, with the nearest one.
    fn from_str(name: &str) -> Result<Self, String> {
        if let Some(hook) = UpgradeHook::ALL.into_iter().find(|h| h.name() == name) {
            return Ok(hook);
        }
        let names = UpgradeHook::ALL.map(UpgradeHook::name);
        let hint = capi_ext_codegen::naming::did_you_mean(name, names.iter().copied())
            .map(|near| format!("; did you mean {near}?"))
            .unwrap_or_default();
        Err(format!(
            "{name} is not a lifecycle hook that can block an upgrade (one of {}){hint}",
            names.join(", ")
        ))
    }
}
