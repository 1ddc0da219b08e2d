//! Every hook's request decoding and dispatch: the first byte picks the path (Discovery or one
//! of the 16 hooks, each with a registered handler), the rest is the body.

use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, Registration};

/// A handler answering Success: what is fuzzed is the decoding before it and the encoding after.
macro_rules! ok {
    ($hook:ident, $name:literal) => {
        Registration::new($hook, $name, |_: <$hook as Hook>::Request| async {
            <<$hook as Hook>::Response as HookResponse>::success()
        })
    };
}

fn main() {
    let extension = Extension::builder()
        .handler(ok!(BeforeClusterCreate, "h1"))
        .handler(ok!(AfterControlPlaneInitialized, "h2"))
        .handler(ok!(BeforeClusterUpgrade, "h3"))
        .handler(ok!(BeforeControlPlaneUpgrade, "h4"))
        .handler(ok!(AfterControlPlaneUpgrade, "h5"))
        .handler(ok!(BeforeWorkersUpgrade, "h6"))
        .handler(ok!(AfterWorkersUpgrade, "h7"))
        .handler(ok!(AfterClusterUpgrade, "h8"))
        .handler(ok!(BeforeClusterDelete, "h9"))
        .handler(ok!(GeneratePatches, "h10"))
        .handler(ok!(ValidateTopology, "h11"))
        .handler(ok!(DiscoverVariables, "h12"))
        .handler(ok!(GenerateUpgradePlan, "h13"))
        .handler(ok!(CanUpdateMachine, "h14"))
        .handler(ok!(CanUpdateMachineSet, "h15"))
        .handler(ok!(UpdateMachine, "h16"))
        .build()
        .expect("the registrations are valid");
    let mut paths = vec![
        capi_ext_codegen::catalog::find("Discovery")
            .unwrap()
            .path(""),
    ];
    for handler in extension.handlers() {
        let hook = capi_ext_codegen::catalog::find(&handler.request_hook.hook).unwrap();
        paths.push(hook.path(&handler.name));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    // A panic is what the fuzzer looks for; nothing is reused after one.
    let state = std::panic::AssertUnwindSafe((extension, runtime, paths));
    afl::fuzz!(|data: &[u8]| {
        let (extension, runtime, paths) = &*state;
        let Some((&pick, body)) = data.split_first() else {
            return;
        };
        let path = &paths[pick as usize % paths.len()];
        runtime.block_on(extension.dispatch(path, Some("timeout=10"), body));
    });
}
