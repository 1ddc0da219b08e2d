//! `#[hook(...)]` on an async handler function: the attribute, the checks, the model.

use crate::catalog::{self, HookInfo};
use crate::naming;
use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::TokenStream;
use syn::punctuated::Punctuated;
use syn::{FnArg, Ident, ItemFn, Meta, ReturnType, Token, Type};

/// The named options of `#[hook(Hook, ...)]`.
#[derive(Debug, Default, FromMeta)]
pub struct HookOptions {
    /// Handler name, a DNS-1123 label (default: the function name in kebab-case).
    pub name: Option<SpannedValue<String>>,
    /// Seconds CAPI waits for the handler, 0..=30 (default 10).
    pub timeout: Option<SpannedValue<i64>>,
    /// `Fail` (default) or `Ignore`: what CAPI does when the call fails at the transport level.
    pub failure_policy: Option<Ident>,
}

/// A checked handler.
#[derive(Debug, Clone)]
pub struct HandlerModel {
    /// The function.
    pub fn_name: Ident,
    /// The hook's catalog row.
    pub hook: &'static HookInfo,
    /// The hook as written (for spans).
    pub hook_ident: Ident,
    /// The handler name.
    pub name: String,
    /// The advertised timeout.
    pub timeout: Option<i32>,
    /// `Fail` or `Ignore`.
    pub failure_policy: Option<Ident>,
    /// `T` of a first argument `State<T>`: the part of the extension's state the handler takes.
    pub state: Option<Type>,
}

fn last_ident(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) => p.path.segments.last(),
        Type::Group(g) => last_ident(&g.elem),
        Type::Paren(p) => last_ident(&p.elem),
        _ => None,
    }
}

fn type_text(ty: &Type) -> String {
    quote::quote!(#ty).to_string().replace(' ', "")
}

/// `T` of `State<T>` (any path ending in `State`), or `None`.
fn state_type(ty: &Type) -> Option<Type> {
    let seg = last_ident(ty)?;
    if seg.ident != "State" {
        return None;
    }
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first() {
            Some(syn::GenericArgument::Type(t)) => Some(t.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// Checks the signature: `async fn name([State<T>,] req: <Hook>Request) -> <Hook>Response`
/// (or `Result<<Hook>Response, E>`); returns `T`.
fn check_signature(
    item: &ItemFn,
    hook: &HookInfo,
    errors: &mut darling::error::Accumulator,
) -> Option<Type> {
    if item.sig.asyncness.is_none() {
        errors.push(
            darling::Error::custom(format!(
                "{} handlers must be `async fn` (CAPI calls are served concurrently)",
                hook.name
            ))
            .with_span(&item.sig.fn_token),
        );
    }
    let inputs: Vec<&FnArg> = item.sig.inputs.iter().collect();
    let (state, request) = match inputs.as_slice() {
        [FnArg::Typed(request)] => (None, Some(request)),
        [FnArg::Typed(state), FnArg::Typed(request)] => {
            let found = state_type(&state.ty);
            if found.is_none() {
                errors.push(
                    darling::Error::custom(format!(
                        "a handler's first argument of two is the extension's state, `State<T>`, found `{}`; the `{}` comes last",
                        type_text(&state.ty),
                        hook.request_kind
                    ))
                    .with_span(&state.ty),
                );
            }
            (found, Some(request))
        }
        _ => {
            errors.push(
                darling::Error::custom(format!(
                    "{} handlers take the `{}`, after the extension's state `State<T>` if they need it",
                    hook.name, hook.request_kind
                ))
                .with_span(&item.sig.ident),
            );
            (None, None)
        }
    };
    if let Some(arg) = request
        && last_ident(&arg.ty).map(|s| s.ident.to_string()).as_deref() != Some(hook.request_kind)
    {
        errors.push(
            darling::Error::custom(format!(
                "{} handlers take a `{}`, found `{}`",
                hook.name,
                hook.request_kind,
                type_text(&arg.ty)
            ))
            .with_span(&arg.ty),
        );
    }
    let ok = match &item.sig.output {
        ReturnType::Type(_, ty) => match last_ident(ty) {
            Some(seg) if seg.ident == hook.response_kind => true,
            Some(seg) if seg.ident == "Result" => match &seg.arguments {
                syn::PathArguments::AngleBracketed(a) => match a.args.first() {
                    Some(syn::GenericArgument::Type(t)) => {
                        last_ident(t).is_some_and(|s| s.ident == hook.response_kind)
                    }
                    _ => false,
                },
                _ => false,
            },
            _ => false,
        },
        ReturnType::Default => false,
    };
    if !ok {
        let found = match &item.sig.output {
            ReturnType::Type(_, ty) => format!("`{}`", type_text(ty)),
            ReturnType::Default => "nothing".to_string(),
        };
        let err = darling::Error::custom(format!(
            "{} handlers return a `{}` (or `Result<{}, E>` whose error becomes a Failure), found {found}",
            hook.name, hook.response_kind, hook.response_kind
        ));
        errors.push(match &item.sig.output {
            ReturnType::Type(_, ty) => err.with_span(ty),
            ReturnType::Default => err.with_span(&item.sig.ident),
        });
    }
    state
}

/// Parses the attribute arguments and the function; reports every mistake on its span.
pub fn parse(args: TokenStream, item: &ItemFn) -> darling::Result<HandlerModel> {
    let metas: Punctuated<Meta, Token![,]> =
        syn::parse::Parser::parse2(Punctuated::parse_terminated, args.clone())
            .map_err(darling::Error::from)?;
    let mut metas = metas.into_iter();
    let hook_ident = match metas.next() {
        Some(Meta::Path(p)) if p.get_ident().is_some() => p.get_ident().expect("checked").clone(),
        Some(other) => {
            return Err(darling::Error::custom(
                "expected the hook first, e.g. #[hook(BeforeClusterCreate)]",
            )
            .with_span(&other));
        }
        None => {
            return Err(darling::Error::custom(format!(
                "which hook does this handler implement? e.g. #[hook(BeforeClusterCreate)]; known hooks: {}",
                known_hooks()
            ))
            .with_span(&item.sig.ident));
        }
    };
    let mut errors = darling::Error::accumulator();
    let nested: Vec<darling::ast::NestedMeta> = metas.map(darling::ast::NestedMeta::Meta).collect();
    let options = errors
        .handle(HookOptions::from_list(&nested))
        .unwrap_or_default();
    let hook_name = hook_ident.to_string();
    let hook = match catalog::find(&hook_name) {
        Some(h) if h.singleton => {
            errors.push(darling::Error::custom("Discovery is answered by the runtime from the registrations; it takes no handler").with_span(&hook_ident));
            None
        }
        Some(h) => Some(h),
        None => {
            let hint = catalog::suggest(&hook_name)
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            errors.push(
                darling::Error::custom(format!(
                    "unknown hook `{hook_name}`{hint} (known hooks: {})",
                    known_hooks()
                ))
                .with_span(&hook_ident),
            );
            None
        }
    };
    let name = match &options.name {
        Some(n) => {
            if let Err(e) = naming::validate_dns_label(n) {
                errors.push(darling::Error::custom(e.to_string()).with_span(&n.span()));
            }
            n.to_string()
        }
        None => naming::to_dns_label(&item.sig.ident.to_string()),
    };
    let timeout = options
        .timeout
        .as_ref()
        .and_then(|t| match naming::validate_timeout(**t) {
            Ok(v) => Some(v),
            Err(e) => {
                errors.push(darling::Error::custom(e.to_string()).with_span(&t.span()));
                None
            }
        });
    if let Some(policy) = options
        .failure_policy
        .as_ref()
        .filter(|p| *p != "Fail" && *p != "Ignore")
    {
        let hint = naming::did_you_mean(&policy.to_string(), ["Fail", "Ignore"])
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        errors.push(
            darling::Error::custom(format!("failure_policy must be `Fail` or `Ignore`{hint}"))
                .with_span(policy),
        );
    }
    let state = hook.and_then(|hook| check_signature(item, hook, &mut errors));
    errors.finish()?;
    Ok(HandlerModel {
        fn_name: item.sig.ident.clone(),
        hook: hook.expect("errors would have returned"),
        hook_ident,
        name,
        timeout,
        failure_policy: options.failure_policy,
        state,
    })
}

fn known_hooks() -> String {
    catalog::HOOKS
        .iter()
        .filter(|h| !h.singleton)
        .map(|h| h.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn check(args: TokenStream, item: TokenStream) -> darling::Result<HandlerModel> {
        parse(args, &syn::parse2(item).unwrap())
    }

    #[test]
    fn defaults_and_options() {
        let m = check(
            quote!(BeforeClusterCreate, timeout = 5, failure_policy = Ignore),
            quote!(
                async fn before_create(
                    req: BeforeClusterCreateRequest,
                ) -> BeforeClusterCreateResponse {
                    todo!()
                }
            ),
        )
        .unwrap();
        assert_eq!(
            (m.name.as_str(), m.timeout, m.hook.name),
            ("before-create", Some(5), "BeforeClusterCreate")
        );
        let m = check(
            quote!(GeneratePatches, name = "patches"),
            quote!(
                async fn p(
                    r: capi_ext::hooks::v1alpha1::GeneratePatchesRequest,
                ) -> Result<GeneratePatchesResponse, String> {
                    todo!()
                }
            ),
        )
        .unwrap();
        assert_eq!(m.name, "patches");
    }

    #[test]
    fn a_first_argument_is_the_state() {
        let m = check(
            quote!(BeforeClusterCreate),
            quote!(
                async fn f(
                    State(app): capi_ext::State<std::sync::Arc<App>>,
                    r: BeforeClusterCreateRequest,
                ) -> BeforeClusterCreateResponse {
                    todo!()
                }
            ),
        )
        .unwrap();
        let state = m.state.unwrap();
        assert_eq!(quote!(#state).to_string(), "std :: sync :: Arc < App >");
        let err = check(
            quote!(BeforeClusterCreate),
            quote!(
                async fn f(app: App, r: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
                    todo!()
                }
            ),
        )
        .unwrap_err();
        assert_eq!(err.len(), 1, "{err}");
        assert!(
            err.to_string().contains(
                "first argument of two is the extension's state, `State<T>`, found `App`"
            ),
            "{err}"
        );
        let err = check(
            quote!(BeforeClusterCreate),
            quote!(
                async fn f(
                    a: A,
                    b: B,
                    c: BeforeClusterCreateRequest,
                ) -> BeforeClusterCreateResponse {
                    todo!()
                }
            ),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("take the `BeforeClusterCreateRequest`, after the extension's state"),
            "{err}"
        );
    }

    #[test]
    fn reports_each_mistake() {
        let err = check(
            quote!(
                BeforeClusterCreat,
                name = "Bad_Name",
                timeout = 31,
                failure_policy = Ignor
            ),
            quote!(
                fn f(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
                    todo!()
                }
            ),
        )
        .unwrap_err();
        let text = err.to_string();
        assert_eq!(err.len(), 4, "{text}");
        assert!(
            text.contains("did you mean `BeforeClusterCreate`"),
            "{text}"
        );
        assert!(text.contains("not a DNS-1123 label"), "{text}");
        assert!(text.contains("timeout of 31 seconds"), "{text}");
        assert!(text.contains("did you mean `Ignore`"), "{text}");
        let err = check(
            quote!(ValidateTopology),
            quote!(
                fn f(req: GeneratePatchesRequest) {}
            ),
        )
        .unwrap_err();
        assert_eq!(err.len(), 3, "{err}");
        assert!(
            err.to_string().contains(
                "handlers take a `ValidateTopologyRequest`, found `GeneratePatchesRequest`"
            )
        );
    }
}
