//! sprig's reflection: `typeOf`, `typeIs`, `typeIsLike`, `kindOf`, `kindIs`, `deepEqual`.

use super::super::value::{Value, deep_equal};
use super::{Out, Table, Ty, boolean, sig, string, text};

pub(super) const TABLE: Table = &[
    sig("typeOf", &[Ty::Any], None),
    sig("typeIs", &[Ty::Str, Ty::Any], None),
    sig("typeIsLike", &[Ty::Str, Ty::Any], None),
    sig("kindOf", &[Ty::Any], None),
    sig("kindIs", &[Ty::Str, Ty::Any], None),
    sig("deepEqual", &[Ty::Any, Ty::Any], None),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    match name {
        "typeOf" => string(args[0].type_name()),
        "typeIs" => boolean(text(&args[0]) == args[1].type_name()),
        "typeIsLike" => {
            let t = args[1].type_name();
            boolean(text(&args[0]) == t || format!("*{}", text(&args[0])) == t)
        }
        "kindOf" => string(args[0].kind_name()),
        "kindIs" => boolean(text(&args[0]) == args[1].kind_name()),
        "deepEqual" => boolean(deep_equal(&args[0], &args[1])),
        _ => unreachable!("{name} is in the table"),
    }
}
