//! Shared state for handlers, the way axum's `State` and kube-runtime's `Context` hand it over:
//! the builder takes it once ([`ExtensionBuilder::state`](crate::ExtensionBuilder::state)),
//! a handler names what it needs in its signature, and a handler asking for a state the
//! extension was not given does not compile.

/// The extension's state (or a part of it, see [`FromRef`]), as a handler's first argument.
///
/// ```
/// use capi_ext::hooks::v1alpha1::*;
/// use capi_ext::{Extension, State, hook};
///
/// #[derive(Clone)]
/// struct Settings { retry_after: i32 }
///
/// #[hook(BeforeClusterDelete)]
/// async fn hold(State(settings): State<Settings>, _req: BeforeClusterDeleteRequest) -> BeforeClusterDeleteResponse {
///     BeforeClusterDeleteResponse::success().retry_after(settings.retry_after)
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let extension = Extension::builder()
///     .state(Settings { retry_after: 30 })
///     .register::<hold>()
///     .build()
///     .unwrap();
/// let answer = extension.call(BeforeClusterDelete, "hold", &BeforeClusterDeleteRequest::new()).await.unwrap();
/// assert_eq!(answer.retry_after_seconds, 30);
/// # }
/// ```
///
/// The state is cloned for every call: keep what is expensive to clone behind an `Arc` (a
/// `kube::Client` is already one).
#[derive(Debug, Clone, Copy, Default)]
pub struct State<T>(pub T);

/// A part of the extension's state `S` a handler can take as `State<Self>` (axum's `FromRef`).
/// Every `Clone` state is a part of itself; implement it for the parts of a larger state:
///
/// ```
/// use capi_ext::FromRef;
///
/// #[derive(Clone)]
/// struct App { settings: Settings, name: String }
/// #[derive(Clone)]
/// struct Settings { retry_after: i32 }
///
/// impl FromRef<App> for Settings {
///     fn from_ref(app: &App) -> Self { app.settings.clone() }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "a handler takes `State<{Self}>`, but the extension's state is `{S}`",
    label = "this handler's state is not part of the extension's state `{S}`",
    note = "give the builder the state once, `Extension::builder().state(value)`; a handler may take the state itself or a part of it that implements `FromRef<{S}>`"
)]
pub trait FromRef<S> {
    /// The part, taken from the state.
    fn from_ref(state: &S) -> Self;
}

impl<T: Clone> FromRef<T> for T {
    fn from_ref(state: &T) -> Self {
        state.clone()
    }
}
