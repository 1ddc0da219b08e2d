//! The generated types find their own difference (`capi_ext::patches::Difference`), and it has
//! the effect of the difference of their encodings: for templates edited at random (members
//! removed, emptied, changed, lists grown, unknown members added), both decoded into the type,
//! the typed difference applied to the first one's encoding gives the second one's.

#![cfg(all(feature = "kubeadm", feature = "docker"))]

use capi_ext::hooks::v1alpha1::JsonPatchOp;
use capi_ext::patches::{Difference, Differences, Template, diff};
use capi_ext_types::docker::v1beta2::DevMachineTemplate;
use capi_ext_types::kubeadm::v1beta2::{KubeadmConfigTemplate, KubeadmControlPlaneTemplate};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn control_plane() -> Value {
    json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate",
        "metadata": {"name": "cp", "namespace": "default", "labels": {"a/b": "c"}},
        "futureTopLevel": 1,
        "spec": {"template": {
            "metadata": {"labels": {"x": "y"}, "annotations": {"k~e/y": "v"}},
            "spec": {
                "kubeadmConfigSpec": {
                    "files": [{"path": "/etc/a", "content": "x", "futureFileField": true}],
                    "preKubeadmCommands": ["echo a"],
                    "clusterConfiguration": {
                        "apiServer": {"extraArgs": [{"name": "v", "value": "2"}], "certSANs": ["a", "b"]},
                        "controllerManager": {"extraArgs": [{"name": "v", "value": "2"}]},
                        "imageRepository": "registry.example.com"},
                    "initConfiguration": {"nodeRegistration": {"kubeletExtraArgs": [{"name": "x", "value": "y"}],
                                                               "taints": []}},
                    "joinConfiguration": {"nodeRegistration": {"criSocket": "unix:///run/c.sock"}}},
                "rollout": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
                "machineNaming": {"template": "{{ .machineSet.name }}"},
                "futureSpecField": {"nested": [1, 2]}}}}
    })
}

fn config() -> Value {
    json!({
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate",
        "metadata": {"name": "w"},
        "spec": {"template": {"spec": {
            "joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": [{"name": "a", "value": "b"}]}},
            "files": [], "users": [{"name": "u", "sshAuthorizedKeys": ["k"]}], "format": "cloud-config"}}}
    })
}

fn machine() -> Value {
    json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachineTemplate",
        "metadata": {"name": "m"},
        "spec": {"template": {"spec": {"backend": {"docker": {
            "extraMounts": [{"containerPath": "/var/run/docker.sock", "hostPath": "/var/run/docker.sock"}],
            "preLoadImages": [], "customImage": "kindest/node:v1.34.0"}}}}}
    })
}

/// A small deterministic generator (no dependency for it).
struct Draw(u64);

impl Draw {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below.max(1)
    }
}

/// The pointers of every member of every object in `value`.
fn members(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let path = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                out.push(path.clone());
                members(child, &path, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                members(child, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// One random edit of `value`.
fn edit(value: &mut Value, draw: &mut Draw) {
    let mut paths = Vec::new();
    members(value, "", &mut paths);
    let path = paths[draw.next(paths.len())].clone();
    if matches!(path.as_str(), "/apiVersion" | "/kind") {
        return;
    }
    let slot = value.pointer_mut(&path).expect("a member");
    match (draw.next(6), &mut *slot) {
        (0, _) => {
            let (parent, key) = path.rsplit_once('/').unwrap();
            let key = key.replace("~1", "/").replace("~0", "~");
            value
                .pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .unwrap()
                .remove(&key);
        }
        (1, Value::String(s)) => s.clear(),
        (1, Value::Array(items)) => items.clear(),
        (2, Value::String(s)) => s.push_str("-edited"),
        (2, Value::Array(items)) if !items.is_empty() => items.push(items[0].clone()),
        (3, Value::Object(map)) => {
            map.insert(format!("future{}", draw.next(3)), json!({"x": [1]}));
        }
        (4, Value::Object(map)) => {
            map.clear();
        }
        (5, Value::Number(_)) => *slot = json!(7),
        (_, Value::Bool(b)) => *b = !*b,
        _ => {}
    }
}

/// `object` with a difference's operations (adds, replaces, removals) applied.
fn applied(object: &Value, ops: &[JsonPatchOp]) -> Value {
    let mut template = Template::new(object.clone());
    for op in ops {
        match op {
            JsonPatchOp::Add { path, value } | JsonPatchOp::Replace { path, value } => {
                template.set(path, value.clone()).unwrap();
            }
            JsonPatchOp::Remove { path } => {
                template.remove(path).expect("removes what is there");
            }
            other => panic!("{other:?}"),
        }
    }
    template.into_object()
}

/// `before` and `after` decoded into `T`, and the typed difference applied to `before`'s
/// encoding: `after`'s encoding.
fn check<T: DeserializeOwned + Serialize + Difference>(before: &Value, after: &Value) -> bool {
    let (Ok(b), Ok(a)) = (
        serde_json::from_value::<T>(before.clone()),
        serde_json::from_value::<T>(after.clone()),
    ) else {
        return false;
    };
    let mut found = Differences::new();
    b.difference(&a, &mut found);
    let ops = found.finish().unwrap();
    let (b, a) = (
        serde_json::to_value(&b).unwrap(),
        serde_json::to_value(&a).unwrap(),
    );
    assert_eq!(applied(&b, &ops), a, "{ops:#?}\nfrom {b}");
    // Not more operations than the difference of the encodings (lists and enums are
    // replaced whole by both).
    assert!(ops.len() <= diff(&b, &a).len().max(1), "{ops:#?}");
    assert_eq!(ops.is_empty(), b == a);
    true
}

#[test]
fn the_typed_difference_has_the_effect_of_the_difference_of_the_encodings() {
    let mut draw = Draw(11);
    let mut checked = [0usize; 3];
    for round in 0..600 {
        let (mut before, which) = match round % 3 {
            0 => (control_plane(), 0),
            1 => (config(), 1),
            _ => (machine(), 2),
        };
        for _ in 0..draw.next(3) {
            edit(&mut before, &mut draw);
        }
        let mut after = before.clone();
        for _ in 0..=draw.next(4) {
            edit(&mut after, &mut draw);
        }
        let ok = match which {
            0 => check::<KubeadmControlPlaneTemplate>(&before, &after),
            1 => check::<KubeadmConfigTemplate>(&before, &after),
            _ => check::<DevMachineTemplate>(&before, &after),
        };
        checked[which] += usize::from(ok);
    }
    assert!(checked.iter().all(|n| *n > 100), "{checked:?}");
}

#[test]
fn required_and_emptied_fields_are_written_as_the_encoding_writes_them() {
    // `name` of a file is required and omitted when empty; `kind` is always written.
    let before = config();
    let mut after = before.clone();
    after["spec"]["template"]["spec"]["users"][0]["name"] = json!("");
    after["kind"] = json!("");
    after["spec"]["template"]["spec"]["format"] = json!("");
    assert!(check::<KubeadmConfigTemplate>(&before, &after));
}

fn drop_empty_lists(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.as_array().is_some_and(Vec::is_empty));
            map.values_mut().for_each(drop_empty_lists);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_empty_lists),
        _ => {}
    }
}

/// The answer of a PatchSet whose typed patch turns `before` into `after` and whose next
/// patch removes the empty lists, applied to `before`; `decoded_first` has a patch read the
/// template before the typed one (so it is edited as a tree, not by its typed difference).
fn answer<T>(before: &Value, after: &T, decoded_first: bool) -> Value
where
    T: capi_ext::patches::TypedTemplate + Clone + Send + Sync + 'static,
{
    use capi_ext::hooks::v1alpha1::{GeneratePatchesRequest, Patch};
    use capi_ext::patches::{NamedPatch, PatchSet, Selector};
    let after = after.clone();
    let mut set: PatchSet<Value> = PatchSet::new();
    if decoded_first {
        set = set.patch(NamedPatch::new("read", Selector::any_template(), |t, _| {
            t.object_mut();
            Ok(())
        }));
    }
    let set = set
        .patch(NamedPatch::typed(
            "typed",
            Selector::any_template(),
            move |t: &mut T, _| {
                *t = after.clone();
                Ok(())
            },
        ))
        .patch(NamedPatch::new(
            "empty-lists",
            Selector::any_template(),
            |t, _| {
                t.remove_empty_lists();
                Ok(())
            },
        ));
    // Read from text, as a request comes: the template is kept as that text.
    let request: GeneratePatchesRequest = serde_json::from_str(
        &json!({"items": [{
            "uid": "1", "holderReference": {"kind": "Cluster", "fieldPath": "spec.infrastructureRef"},
            "object": before}]})
        .to_string(),
    )
    .unwrap();
    let response = set.generate(&request);
    assert!(response.message.is_empty(), "{}", response.message);
    match response.items.first() {
        Some(item) => {
            let Patch::Json(ops) = &item.patch else {
                panic!("{:?}", item.patch)
            };
            applied(before, ops)
        }
        None => before.clone(),
    }
}

/// A typed patch's edit kept as its difference, then the empty lists removed (found in the
/// text CAPI sent and in the difference), answers what the same patches answer on the
/// template as a tree: the edit's encoding without empty lists.
#[test]
fn empty_lists_are_removed_alike_from_a_typed_difference_and_from_a_tree() {
    fn case<T>(before: &Value, after: &Value) -> bool
    where
        T: capi_ext::patches::TypedTemplate + Clone + Send + Sync + 'static,
    {
        let (Ok(b), Ok(a)) = (
            serde_json::from_value::<T>(before.clone()),
            serde_json::from_value::<T>(after.clone()),
        ) else {
            return false;
        };
        let before = serde_json::to_value(&b).unwrap();
        let mut expected = serde_json::to_value(&a).unwrap();
        drop_empty_lists(&mut expected);
        assert_eq!(answer(&before, &a, false), expected, "from {before}");
        assert_eq!(answer(&before, &a, true), expected, "from {before}");
        true
    }
    let mut draw = Draw(5);
    let mut checked = 0;
    for round in 0..300 {
        let base = match round % 3 {
            0 => control_plane(),
            1 => config(),
            _ => machine(),
        };
        let mut after = base.clone();
        for _ in 0..draw.next(4) {
            edit(&mut after, &mut draw);
        }
        if round % 5 == 0 {
            // An edit that makes an empty list.
            if let Some(list) = after.pointer_mut("/spec/template/spec/users") {
                *list = json!([]);
            }
        }
        let ok = match round % 3 {
            0 => case::<KubeadmControlPlaneTemplate>(&base, &after),
            1 => case::<KubeadmConfigTemplate>(&base, &after),
            _ => case::<DevMachineTemplate>(&base, &after),
        };
        checked += usize::from(ok);
    }
    assert!(checked > 200, "{checked}");
    // An empty list added where there was none, and one replacing a list.
    let mut before = config();
    let spec = before.pointer_mut("/spec/template/spec").unwrap();
    spec.as_object_mut().unwrap().remove("users");
    let mut after = before.clone();
    after["spec"]["template"]["spec"]["users"] = json!([]);
    after["spec"]["template"]["spec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"] =
        json!([]);
    assert!(case::<KubeadmConfigTemplate>(&before, &after));
}
