//! sprig's date functions of the hermetic map: `toDate`, `mustToDate`, `unixEpoch`,
//! `mustDateModify` (and its alias `must_date_modify`). `ago` and `durationRound` of a time
//! read the clock and are refused (see [`super::UNSUPPORTED`] and `durationRound`).

use super::super::time::{Time, parse_in_local};
use super::super::value::{Value, go_bytes};
use super::{Out, Table, Ty, parse_duration, sig, string, text};
use std::rc::Rc;

pub(super) const TABLE: Table = &[
    sig("toDate", &[Ty::Str, Ty::Str], None),
    sig("mustToDate", &[Ty::Str, Ty::Str], None),
    sig("unixEpoch", &[Ty::Time], None),
    sig("mustDateModify", &[Ty::Str, Ty::Time], None),
    sig("must_date_modify", &[Ty::Str, Ty::Time], None),
];

fn time(v: &Value) -> &Time {
    match v {
        Value::Time(t) => t,
        _ => unreachable!("checked to be a time.Time"),
    }
}

fn parse(args: &[Value]) -> Result<Time, String> {
    parse_in_local(&go_bytes(text(&args[0])), &go_bytes(text(&args[1])))
}

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    let date = |t: Time| Ok(Value::Time(Rc::new(t)));
    match name {
        // Go's ParseInLocation returns the zero Time with its error; toDate drops the error.
        "toDate" => date(parse(&args).unwrap_or_else(|_| Time::zero())),
        "mustToDate" => date(parse(&args)?),
        "unixEpoch" => string(time(&args[0]).unix().to_string()),
        "mustDateModify" | "must_date_modify" => {
            let d = parse_duration(text(&args[0]))
                .ok_or_else(|| format!("time: invalid duration {:?}", text(&args[0])))?;
            date(time(&args[1]).add(d))
        }
        _ => unreachable!("{name} is in the table"),
    }
}
