//! sprig's numbers: integer arithmetic through `cast.ToInt64` (spf13/cast v1.10.0, the version
//! Cluster API's module graph selects), float arithmetic through
//! shopspring's decimals, ranges, conversions, and `duration`.

use super::super::format::print;
use super::super::parse::parse_integer;
use super::super::value::{Elem, Value};
use super::{Out, Table, Ty, int, sig, string, text};
pub(crate) use capi_ext::duration::parse_go_nanos as parse_duration;

pub(super) const TABLE: Table = &[
    sig("atoi", &[Ty::Str], None),
    sig("int64", &[Ty::Any], None),
    sig("int", &[Ty::Any], None),
    sig("float64", &[Ty::Any], None),
    sig("seq", &[], Some(Ty::Int)),
    sig("toDecimal", &[Ty::Any], None),
    sig("until", &[Ty::Int], None),
    sig("untilStep", &[Ty::Int, Ty::Int, Ty::Int], None),
    sig("add1", &[Ty::Any], None),
    sig("add", &[], Some(Ty::Any)),
    sig("sub", &[Ty::Any, Ty::Any], None),
    sig("div", &[Ty::Any, Ty::Any], None),
    sig("mod", &[Ty::Any, Ty::Any], None),
    sig("mul", &[Ty::Any], Some(Ty::Any)),
    sig("add1f", &[Ty::Any], None),
    sig("addf", &[], Some(Ty::Any)),
    sig("subf", &[Ty::Any], Some(Ty::Any)),
    sig("divf", &[Ty::Any], Some(Ty::Any)),
    sig("mulf", &[Ty::Any], Some(Ty::Any)),
    sig("biggest", &[Ty::Any], Some(Ty::Any)),
    sig("max", &[Ty::Any], Some(Ty::Any)),
    sig("min", &[Ty::Any], Some(Ty::Any)),
    sig("maxf", &[Ty::Any], Some(Ty::Any)),
    sig("minf", &[Ty::Any], Some(Ty::Any)),
    sig("ceil", &[Ty::Any], None),
    sig("floor", &[Ty::Any], None),
    sig("round", &[Ty::Any, Ty::Int], Some(Ty::Float)),
    sig("duration", &[Ty::Any], None),
    sig("durationRound", &[Ty::Any], None),
];

/// cast v1.10's `trimDecimal`: a decimal string keeps its integer part (`1.5` → `1`, `.5` → `0`).
fn trim_decimal(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    let (int, frac) = s.split_once('.').expect("contains a dot");
    let digits = int.strip_prefix(['+', '-']).unwrap_or(int);
    if !digits.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return s.to_string();
    }
    match int {
        "" => "0".into(),
        "-" | "+" => format!("{int}0"),
        _ => int.to_string(),
    }
}

/// Go's float64 → int64 conversion as amd64 does it (out of range: the minimum).
pub(super) fn f64_to_i64(f: f64) -> i64 {
    if f.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// cast's `ToInt64` (errors read as 0).
pub(super) fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint(u, _) => *u as i64,
        Value::Float(f) => f64_to_i64(*f),
        Value::Str(s) => parse_integer(&trim_decimal(s)).0.unwrap_or(0),
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

/// cast's `ToInt`.
pub(super) fn to_int(v: &Value) -> i64 {
    to_int64(v)
}

/// cast's `ToFloat64` (errors read as 0).
pub(super) fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Uint(u, _) => *u as f64,
        Value::Float(f) => *f,
        Value::Str(s) => parse_float(s).unwrap_or(0.0),
        Value::Bool(b) => f64::from(u8::from(*b)),
        _ => 0.0,
    }
}

/// Go's `strconv.ParseFloat(s, 64)` for decimal text; out of range is an error.
fn parse_float(s: &str) -> Option<f64> {
    if s.contains('_') || s.to_ascii_lowercase().contains("0x") {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    let lower = s.trim_start_matches(['+', '-']).to_ascii_lowercase();
    if f.is_infinite() && lower != "inf" && lower != "infinity" {
        return None;
    }
    Some(f)
}

/// How many numbers `until`, `untilStep` and `seq` may count before render refuses the template.
const MAX_COUNT: usize = 1 << 20;

/// sprig's `untilStep`; past [`MAX_COUNT`] numbers an error (Go keeps allocating: a template
/// counting to `int .n` with `.n` = 1e21 runs Cluster API's manager out of memory).
fn until_step(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, String> {
    let mut v = Vec::new();
    let more = |i: i64| if step < 0 { i > stop } else { i < stop };
    if (stop < start && step >= 0) || (stop >= start && step <= 0) {
        return Ok(v);
    }
    let mut i = start;
    while more(i) {
        if v.len() == MAX_COUNT {
            return Err(format!(
                "counting from {start} to {stop} by {step} makes more than {MAX_COUNT} numbers: not supported by render (Cluster API's manager runs out of memory on it)"
            ));
        }
        v.push(i);
        i = i.wrapping_add(step);
    }
    Ok(v)
}

/// `[]int{}` appended to one by one.
fn ints(v: Vec<i64>) -> Value {
    Value::appended(Elem::Int, v.into_iter().map(Value::Int).collect())
}

fn seq(params: &[i64]) -> Result<String, String> {
    let list = match *params {
        [] => return Ok(String::new()),
        [end] => {
            let inc = if end < 1 { -1 } else { 1 };
            until_step(1, end.wrapping_add(inc), inc)
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            until_step(start, end.wrapping_add(step), step)
        }
        [start, step, end] => {
            let mut inc = 1;
            if end < start {
                inc = -1;
                if step > 0 {
                    return Ok(String::new());
                }
            }
            until_step(start, end.wrapping_add(inc), step)
        }
        _ => return Ok(String::new()),
    }?;
    Ok(list
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(" "))
}

/// A decimal `m × 10^e` (shopspring's `Decimal`, within 128 bits).
#[derive(Clone, Copy)]
struct Dec {
    m: i128,
    e: i32,
}

const OVERFLOW: &str = "the decimal arithmetic exceeds what render computes (128 bits)";

impl Dec {
    fn from_f64(f: f64) -> Result<Dec, String> {
        if !f.is_finite() {
            return Err(format!(
                "Cannot create a Decimal from {}",
                print(&Value::Float(f))
            ));
        }
        if f == 0.0 {
            return Ok(Dec { m: 0, e: 0 });
        }
        let text = format!("{:e}", f);
        let (mantissa, exp) = text.split_once('e').expect("an exponent");
        let exp: i32 = exp.parse().expect("an integer");
        let digits: String = mantissa
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        let frac = mantissa.split_once('.').map_or(0, |(_, f)| f.len() as i32);
        Ok(Dec {
            m: digits.parse().map_err(|_| OVERFLOW)?,
            e: exp - frac,
        })
    }

    fn pow10(n: i32) -> Result<i128, String> {
        10i128
            .checked_pow(n as u32)
            .ok_or_else(|| OVERFLOW.to_string())
    }

    fn align(a: Dec, b: Dec) -> Result<(i128, i128, i32), String> {
        let e = a.e.min(b.e);
        let am = a.m.checked_mul(Dec::pow10(a.e - e)?).ok_or(OVERFLOW)?;
        let bm = b.m.checked_mul(Dec::pow10(b.e - e)?).ok_or(OVERFLOW)?;
        Ok((am, bm, e))
    }

    fn op(self, other: Dec, op: char) -> Result<Dec, String> {
        match op {
            '+' | '-' => {
                let (a, b, e) = Dec::align(self, other)?;
                let m = if op == '+' {
                    a.checked_add(b)
                } else {
                    a.checked_sub(b)
                };
                Ok(Dec {
                    m: m.ok_or(OVERFLOW)?,
                    e,
                })
            }
            '*' => Ok(Dec {
                m: self.m.checked_mul(other.m).ok_or(OVERFLOW)?,
                e: self.e + other.e,
            }),
            _ => {
                if other.m == 0 {
                    return Err("decimal division by 0".into());
                }
                // Rounded to 16 places after the point, half away from zero.
                let shift = self.e - other.e + 16;
                let (mut n, mut d) = (self.m, other.m);
                if shift >= 0 {
                    n = n.checked_mul(Dec::pow10(shift)?).ok_or(OVERFLOW)?;
                } else {
                    d = d.checked_mul(Dec::pow10(-shift)?).ok_or(OVERFLOW)?;
                }
                let (q, r) = (n / d, n % d);
                let twice = r
                    .checked_abs()
                    .ok_or(OVERFLOW)?
                    .checked_mul(2)
                    .ok_or(OVERFLOW)?;
                let q = if twice >= d.abs() {
                    if (n < 0) != (d < 0) { q - 1 } else { q + 1 }
                } else {
                    q
                };
                Ok(Dec { m: q, e: -16 })
            }
        }
    }

    fn to_f64(self) -> f64 {
        format!("{}e{}", self.m, self.e).parse().unwrap_or(0.0)
    }
}

fn decimal_op(first: &Value, rest: &[Value], op: char) -> Out {
    let mut acc = Dec::from_f64(to_float64(first))?;
    for x in rest {
        acc = acc.op(Dec::from_f64(to_float64(x))?, op)?;
    }
    Ok(Value::Float(acc.to_f64()))
}

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    let i64s = || args.iter().map(to_int64);
    match name {
        "atoi" => Ok(Value::Int(atoi(text(&args[0])))),
        "int64" => Ok(Value::Int64(to_int64(&args[0]))),
        "int" => Ok(Value::Int(to_int(&args[0]))),
        "float64" => Ok(Value::Float(to_float64(&args[0]))),
        "seq" => string(seq(&args.iter().map(int).collect::<Vec<_>>())?),
        "toDecimal" => Ok(Value::Int64(to_decimal(&print(&args[0])))),
        "until" => {
            let n = int(&args[0]);
            Ok(ints(until_step(0, n, if n < 0 { -1 } else { 1 })?))
        }
        "untilStep" => Ok(ints(until_step(
            int(&args[0]),
            int(&args[1]),
            int(&args[2]),
        )?)),
        "add1" => Ok(Value::Int64(to_int64(&args[0]).wrapping_add(1))),
        "add" => Ok(Value::Int64(i64s().fold(0i64, i64::wrapping_add))),
        "sub" => Ok(Value::Int64(
            to_int64(&args[0]).wrapping_sub(to_int64(&args[1])),
        )),
        "mul" => Ok(Value::Int64(i64s().fold(1i64, i64::wrapping_mul))),
        "div" | "mod" => {
            let (a, b) = (to_int64(&args[0]), to_int64(&args[1]));
            if b == 0 {
                return Err("runtime error: integer divide by zero".into());
            }
            Ok(Value::Int64(if name == "div" {
                a.wrapping_div(b)
            } else {
                a.wrapping_rem(b)
            }))
        }
        "biggest" | "max" => Ok(Value::Int64(i64s().max().unwrap_or_default())),
        "min" => Ok(Value::Int64(i64s().min().unwrap_or_default())),
        "maxf" | "minf" => {
            let mut acc = to_float64(&args[0]);
            for b in &args[1..] {
                let b = to_float64(b);
                acc = go_max_min(acc, b, name == "maxf");
            }
            Ok(Value::Float(acc))
        }
        "ceil" => Ok(Value::Float(to_float64(&args[0]).ceil())),
        "floor" => Ok(Value::Float(to_float64(&args[0]).floor())),
        "round" => {
            let round_on = match args.get(2) {
                Some(Value::Float(f)) => *f,
                _ => 0.5,
            };
            let val = to_float64(&args[0]);
            let pow = go_pow10(int(&args[1]));
            let digit = pow * val;
            let div = digit.fract();
            let rounded = if div >= round_on {
                digit.ceil()
            } else {
                digit.floor()
            };
            Ok(Value::Float(rounded / pow))
        }
        "add1f" => decimal_op(&args[0], &[Value::Int(1)], '+'),
        "addf" => decimal_op(&Value::Float(0.0), &args, '+'),
        "subf" => decimal_op(&args[0], &args[1..], '-'),
        "mulf" => decimal_op(&args[0], &args[1..], '*'),
        "divf" => decimal_op(&args[0], &args[1..], '/'),
        "duration" => {
            let n = match &args[0] {
                Value::Str(s) => atoi_base10(s),
                Value::Int64(i) => *i,
                _ => 0,
            };
            string(capi_ext::duration::format_go(n.wrapping_mul(1_000_000_000)))
        }
        "durationRound" => {
            let d = match &args[0] {
                // time.Since: the reconcile's clock.
                Value::Time(_) => return Err("durationRound of a time.Time reads the clock (time.Since): not supported by render, CAPI would compute a new value at every reconcile".into()),
                Value::Str(s) => parse_duration(s).unwrap_or(0),
                Value::Int64(i) => *i,
                _ => 0,
            };
            string(duration_round(d))
        }
        _ => unreachable!("{name} is in the table"),
    }
}

/// Go's `math.Pow(10, y)` for an integer `y`: repeated squaring of the fraction with the
/// exponent kept apart, so it rounds as Go does (libm's `pow` can differ in the last bit).
fn go_pow10(y: i64) -> f64 {
    if y == 0 {
        return 1.0;
    }
    let (mut x1, mut xe) = (0.625f64, 4i64); // Frexp(10)
    let (mut a1, mut ae) = (1.0f64, 0i64);
    let mut i = y.unsigned_abs();
    while i != 0 {
        if !(-(1 << 12)..=(1 << 12)).contains(&xe) {
            ae += xe;
            break;
        }
        if i & 1 == 1 {
            a1 *= x1;
            ae += xe;
        }
        x1 *= x1;
        xe <<= 1;
        if x1 < 0.5 {
            x1 += x1;
            xe -= 1;
        }
        i >>= 1;
    }
    if y < 0 {
        a1 = 1.0 / a1;
        ae = -ae;
    }
    ldexp(a1, ae)
}

/// `frac × 2^exp`, in steps that neither overflow nor lose bits before the last one.
fn ldexp(mut frac: f64, mut exp: i64) -> f64 {
    while exp > 1000 {
        frac *= 2f64.powi(1000);
        exp -= 1000;
    }
    while exp < -1000 {
        frac *= 2f64.powi(-1000);
        exp += 1000;
    }
    frac * 2f64.powi(exp as i32)
}

/// sprig's `durationRound`: the largest whole unit (years of 365 days, months of 30).
fn duration_round(d: i64) -> String {
    let u = d.unsigned_abs();
    const HOUR: u64 = 3_600_000_000_000;
    for (size, unit) in [
        (HOUR * 24 * 365, "y"),
        (HOUR * 24 * 30, "mo"),
        (HOUR * 24, "d"),
        (HOUR, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
    ] {
        if u > size {
            return format!("{}{unit}", u / size);
        }
    }
    "0s".into()
}

/// Go's `math.Max` / `math.Min` (NaN wins; signed zeros ordered).
fn go_max_min(a: f64, b: f64, max: bool) -> f64 {
    let inf = if max {
        f64::INFINITY
    } else {
        f64::NEG_INFINITY
    };
    if a == inf || b == inf {
        return inf;
    }
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == 0.0 && b == 0.0 {
        let negative = if max {
            a.is_sign_negative() && b.is_sign_negative()
        } else {
            a.is_sign_negative() || b.is_sign_negative()
        };
        return if negative { -0.0 } else { 0.0 };
    }
    if max { a.max(b) } else { a.min(b) }
}

/// `strconv.Atoi` (errors read as 0).
fn atoi(s: &str) -> i64 {
    atoi_base10(s)
}

/// `strconv.ParseInt(s, 10, 64)` (errors read as 0).
fn atoi_base10(s: &str) -> i64 {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    s.parse().unwrap_or(0)
}

/// sprig's `toDecimal`: `strconv.ParseInt(fmt.Sprint(v), 8, 64)`, 0 on error.
fn to_decimal(s: &str) -> i64 {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return 0;
    }
    i64::from_str_radix(s, 8).unwrap_or(0)
}
