//! render checks what CAPI's reconcile loop relies on: the same request gets the same answer,
//! and GeneratePatches does not depend on the order of the items.

use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, Registration, Variables};
use capi_ext_render::{Input, RenderError, render};
use serde::Deserialize;
use std::sync::atomic::{AtomicU32, Ordering};

#[derive(Deserialize, Variables)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Vars {
    image_repository: Option<String>,
}

mod common;

fn input() -> Input {
    common::quickstart_input()
}

async fn validate(_: ValidateTopologyRequest) -> ValidateTopologyResponse {
    ValidateTopologyResponse::success()
}

fn extension<F, Fut>(patches: F) -> Extension
where
    F: Fn(GeneratePatchesRequest) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = GeneratePatchesResponse> + Send + 'static,
{
    Extension::builder()
        .variables::<Vars>("variables")
        .handler(Registration::new(GeneratePatches, "patches", patches))
        .handler(Registration::new(ValidateTopology, "validate", validate))
        .build()
        .unwrap()
}

static CALLS: AtomicU32 = AtomicU32::new(0);

#[tokio::test]
async fn an_answer_that_changes_between_identical_calls_is_named() {
    let ext = extension(|req: GeneratePatchesRequest| async move {
        let n = CALLS.fetch_add(1, Ordering::SeqCst);
        let uid = req.items[0].uid.clone();
        GeneratePatchesResponse::success()
            .patch(uid, Patch::json().add("/spec/template/spec/generation", n))
    });
    let err = render(&input(), &ext).await.unwrap_err();
    assert!(
        matches!(&err, RenderError::Nondeterministic(n) if n.what == "the same request"),
        "{err}"
    );
    let message = err.to_string();
    assert!(message.starts_with("GeneratePatches `patches` (patch quickstart) is not deterministic: the same request changed /items/0/patch from"), "{message}");
}

#[tokio::test]
async fn a_patch_that_depends_on_the_item_order_is_named() {
    let ext = extension(|req: GeneratePatchesRequest| async move {
        req.items
            .iter()
            .enumerate()
            .fold(GeneratePatchesResponse::success(), |resp, (i, item)| {
                resp.patch(
                    item.uid.clone(),
                    Patch::json().add("/spec/template/spec/position", i),
                )
            })
    });
    let err = render(&input(), &ext).await.unwrap_err().to_string();
    assert!(
        err.contains("is not deterministic: the items in reverse order changed the patch of item"),
        "{err}"
    );
    assert!(
        err.contains(r#"[{"op":"add","path":"/spec/template/spec/position","value":0}]"#),
        "{err}"
    );
}

#[tokio::test]
async fn deterministic_extensions_render() {
    let ext = extension(|req: GeneratePatchesRequest| async move {
        req.items
            .iter()
            .fold(GeneratePatchesResponse::success(), |resp, item| {
                let kind = item.object["kind"].as_str().unwrap_or_default().to_string();
                resp.patch(
                    item.uid.clone(),
                    Patch::json().add("/spec/template/spec/kind", kind),
                )
            })
    });
    let rendered = render(&input(), &ext).await.unwrap();
    // The six objects of the topology and the Cluster's topology-managed fields.
    assert_eq!(rendered.objects.len(), 7);
}

#[tokio::test]
async fn a_message_quoting_an_item_uid_is_named() {
    // The same for the same request, but CAPI sends new random uids on every reconcile.
    let ext = extension(|req: GeneratePatchesRequest| async move {
        GeneratePatchesResponse::failure(format!("item {} is not supported", req.items[0].uid))
    });
    let err = render(&input(), &ext).await.unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(&err, RenderError::VolatileMessage { what: "a UUID", .. }),
        "{message}"
    );
    assert!(
        message.starts_with(
            "GeneratePatches `patches` (patch quickstart) answered a message with a UUID in it (`"
        ),
        "{message}"
    );
}
