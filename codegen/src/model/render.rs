//! Rendering the model to tokens: what the derive macros expand to. Each entry point takes
//! and returns `proc_macro2::TokenStream`, so it is testable outside a proc-macro crate.
//! On errors the output holds the errors *and* dummy items, so the user sees one error per
//! mistake and no cascade.

use super::handler;
use super::schema_item::{self, DeriveKind, ItemModel, SchemaModel};
use super::shape::Shape;
use crate::schema::Primitive;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// `#[hook(...)]`: the function unchanged, plus a type of the same name (type namespace only)
/// implementing `capi_ext::HookHandler`, so `Extension::builder().register::<name>()` works.
pub fn hook(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let err = syn::Error::new(item.span(), "#[hook] goes on an `async fn` handler")
                .to_compile_error();
            return quote!(#item #err);
        }
    };
    let ident = &func.sig.ident;
    let vis = &func.vis;
    let doc = format!(
        "Registration of the `{ident}` handler, for `Extension::builder().register::<{ident}>()`."
    );
    let (body, bounds, errors) = match handler::parse(args, &func) {
        Ok(model) => {
            let hook = &model.hook_ident;
            let name = &model.name;
            let timeout = model.timeout.map(|t| {
                let t = i64::from(t);
                quote!(.timeout_seconds(#t))
            });
            let policy = model
                .failure_policy
                .as_ref()
                .map(|p| quote!(.failure_policy(::capi_ext::hooks::v1alpha1::FailurePolicy::#p)));
            let (constructor, bounds) = match &model.state {
                Some(state) => (
                    quote!(with_state),
                    quote_spanned!(state.span()=> #state: ::capi_ext::FromRef<S> + ::core::clone::Clone + ::core::marker::Send + ::core::marker::Sync + 'static,),
                ),
                None => (quote!(new), TokenStream::new()),
            };
            let call = quote_spanned!(ident.span()=> ::capi_ext::Registration::#constructor(::capi_ext::hooks::v1alpha1::#hook, #name, #ident));
            (quote!(#call #timeout #policy), bounds, TokenStream::new())
        }
        Err(e) => (
            quote!(::core::unreachable!(
                "the #[hook] attribute reported an error"
            )),
            TokenStream::new(),
            e.write_errors(),
        ),
    };
    quote! {
        #func
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #ident {}
        impl<S: ::core::marker::Send + ::core::marker::Sync + 'static> ::capi_ext::HookHandler<S> for #ident
        where
            #bounds
        {
            fn registration() -> ::capi_ext::Registration<S> {
                #body
            }
        }
        #errors
    }
}

fn schema_path() -> TokenStream {
    quote!(::capi_ext::__private::schema)
}

/// The expression building a shape's schema at run time.
pub fn shape_tokens(shape: &Shape, ty: &syn::Type) -> TokenStream {
    let s = schema_path();
    match shape {
        Shape::Primitive(p) => {
            let variant = match p {
                Primitive::String => quote!(String),
                Primitive::Integer => quote!(Integer),
                Primitive::Number => quote!(Number),
                Primitive::Boolean => quote!(Boolean),
                Primitive::Any => quote!(Any),
                Primitive::IntOrString => quote!(IntOrString),
            };
            quote!(#s::primitive(#s::Primitive::#variant))
        }
        Shape::Option(inner) => shape_tokens(inner, ty),
        Shape::Array(inner) => {
            let inner = shape_tokens(inner, ty);
            quote!(#s::array(#inner))
        }
        Shape::Map(inner) => {
            let inner = shape_tokens(inner, ty);
            quote!(#s::map(#inner))
        }
        Shape::Named(path) => {
            quote_spanned!(ty.span()=> <#path as ::capi_ext::schema::Schema>::schema())
        }
        Shape::Schemars { ty: inner, label } => {
            quote_spanned!(ty.span()=> ::capi_ext::schema::schemars::field::<#inner>(#label))
        }
    }
}

fn with_attrs(base: TokenStream, attrs: &crate::schema::SchemaAttrs) -> TokenStream {
    if attrs.is_empty() {
        return base;
    }
    let s = schema_path();
    let json = serde_json::to_string(attrs).expect("attributes serialize");
    quote!(#s::apply_json(#base, #json))
}

fn schema_body(model: &SchemaModel) -> TokenStream {
    let s = schema_path();
    let base = match &model.item {
        ItemModel::Struct { properties } => {
            let props = properties.iter().map(|p| {
                let name = &p.name;
                let value = with_attrs(shape_tokens(&p.shape, &p.ty), &p.attrs);
                quote!((::std::string::String::from(#name), #value))
            });
            let required = properties.iter().filter(|p| p.required).map(|p| &p.name);
            quote!(#s::object(::std::vec![#(#props),*], ::std::vec![#(::std::string::String::from(#required)),*]))
        }
        ItemModel::Enum { values } => {
            quote!(#s::string_enum(::std::vec![#(::std::string::String::from(#values)),*]))
        }
    };
    with_attrs(base, &model.attrs)
}

fn variables_body(model: &SchemaModel) -> TokenStream {
    let s = schema_path();
    let ItemModel::Struct { properties } = &model.item else {
        return quote!(::std::vec::Vec::new());
    };
    let vars = properties.iter().map(|p| {
        let name = &p.name;
        let required = p.required;
        let value = with_attrs(shape_tokens(&p.shape, &p.ty), &p.attrs);
        quote!(#s::variable(#name, #required, #value))
    });
    quote!(::std::vec![#(#vars),*])
}

/// `#[derive(Schema)]` and `#[derive(Variables)]`.
pub fn derive(input: TokenStream, kind: DeriveKind) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let (body, errors) = match schema_item::parse(&input, kind) {
        Ok(model) => (
            match kind {
                DeriveKind::Schema => schema_body(&model),
                DeriveKind::Variables => variables_body(&model),
            },
            TokenStream::new(),
        ),
        Err(e) => (
            quote!(::core::unreachable!("the derive reported an error")),
            e.write_errors(),
        ),
    };
    let imp = match kind {
        DeriveKind::Schema => quote! {
            impl #impl_generics ::capi_ext::schema::Schema for #ident #ty_generics #where_clause {
                fn schema() -> ::capi_ext::__private::serde_json::Value { #body }
            }
        },
        DeriveKind::Variables => quote! {
            impl #impl_generics ::capi_ext::schema::Variables for #ident #ty_generics #where_clause {
                fn definitions_json() -> ::std::vec::Vec<::capi_ext::__private::serde_json::Value> { #body }
            }
        },
    };
    quote!(#imp #errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_expansion_keeps_the_function_and_adds_the_registration() {
        let out = hook(
            quote!(BeforeClusterCreate, timeout = 5),
            quote!(
                pub async fn before_create(
                    r: BeforeClusterCreateRequest,
                ) -> BeforeClusterCreateResponse {
                    todo!()
                }
            ),
        )
        .to_string();
        assert!(out.contains("pub async fn before_create"), "{out}");
        assert!(out.contains("pub struct before_create { }"), "{out}");
        assert!(out.contains(r#"Registration :: new (:: capi_ext :: hooks :: v1alpha1 :: BeforeClusterCreate , "before-create" , before_create) . timeout_seconds (5i64)"#), "{out}");
    }

    #[test]
    fn errors_come_with_dummies() {
        let out = hook(
            quote!(Nope),
            quote!(
                async fn f(r: X) -> Y {
                    todo!()
                }
            ),
        )
        .to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("capi_ext :: HookHandler < S > for f"), "{out}");
        let out = derive(
            quote!(
                struct T(u8);
            ),
            DeriveKind::Variables,
        )
        .to_string();
        assert!(
            out.contains("compile_error")
                && out.contains("impl :: capi_ext :: schema :: Variables for T"),
            "{out}"
        );
    }
}
