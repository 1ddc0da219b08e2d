//! Go's `fmt` for the values a template holds: `Sprint`, `Sprintln`, `Sprintf` with every flag,
//! width, precision, argument index and verb, and `strconv`'s float and quote formatting.

use super::value::{Elem, UintType, Value, go_bytes, raw_byte_of};

/// Go's `%v` of a float64: the shortest digits that read back the same, in `%e` form when
/// the exponent is below -4 or at least 6 (`1e+06`, `1.5e-05`), plain otherwise (`123456`, `0.5`).
///
/// ```
/// use capi_ext_render::go_template::go_float;
/// assert_eq!(go_float(1000000.0), "1e+06");
/// assert_eq!(go_float(123456.0), "123456");
/// assert_eq!(go_float(0.00001), "1e-05");
/// ```
pub fn go_float(f: f64) -> String {
    format_float(f, 'g', -1)
}

/// The decimal digits of |f| and the position of the decimal point (`strconv`'s decimalSlice):
/// shortest when `digits` is `None`, else rounded (half to even, on the exact value) to that
/// many significant digits; trailing zeros removed.
fn decimal_digits(f: f64, digits: Option<usize>) -> (Vec<u8>, i32) {
    if f == 0.0 {
        return (Vec::new(), 0);
    }
    let text = match digits {
        None => format!("{:e}", f.abs()),
        Some(n) => format!("{:.*e}", n.saturating_sub(1), f.abs()),
    };
    let (mantissa, exponent) = text.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    let mut d: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    while d.last() == Some(&b'0') {
        d.pop();
    }
    (d, exponent + 1)
}

/// The digits of |f| rounded to `decimals` places after the point (for `%f`).
fn fixed_digits(f: f64, decimals: usize) -> (Vec<u8>, i32) {
    let text = format!("{:.*}", decimals, f.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let mut d: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let mut dp = int.len() as i32;
    while d.first() == Some(&b'0') {
        d.remove(0);
        dp -= 1;
    }
    while d.last() == Some(&b'0') {
        d.pop();
    }
    if d.is_empty() {
        dp = 0;
    }
    (d, dp)
}

/// `strconv.FormatFloat(f, fmt, prec, 64)` for `fmt` in `e E f g G b`.
pub(super) fn format_float(f: f64, fmt: char, prec: i32) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let neg = f.is_sign_negative();
    let sign = if neg { "-" } else { "" };
    if fmt == 'x' || fmt == 'X' {
        return hex_float(f, fmt == 'X');
    }
    if fmt == 'b' {
        let bits = f.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i64;
        let mut mant = bits & ((1 << 52) - 1);
        let exp = if exp == 0 {
            -1074
        } else {
            mant |= 1 << 52;
            exp - 1075
        };
        return format!("{sign}{mant}p{}{exp}", if exp >= 0 { "+" } else { "" });
    }
    let shortest = prec < 0;
    let (digs, dp, mut prec) = if shortest {
        let (d, dp) = decimal_digits(f, None);
        let nd = d.len() as i32;
        let prec = match fmt {
            'e' | 'E' => (nd - 1).max(0),
            'f' => (nd - dp).max(0),
            _ => nd,
        };
        (d, dp, prec)
    } else {
        match fmt {
            'e' | 'E' => {
                let (d, dp) = decimal_digits(f, Some(prec as usize + 1));
                (d, dp, prec)
            }
            'f' => {
                let (d, dp) = fixed_digits(f, prec as usize);
                (d, dp, prec)
            }
            _ => {
                let prec = prec.max(1);
                let (d, dp) = decimal_digits(f, Some(prec as usize));
                (d, dp, prec)
            }
        }
    };
    let nd = digs.len() as i32;
    match fmt {
        'e' | 'E' => fmt_e(sign, &digs, dp, prec, fmt),
        'f' => fmt_f(sign, &digs, dp, prec),
        _ => {
            let mut eprec = prec;
            if eprec > nd && nd >= dp {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            let exp = dp - 1;
            let efmt = if fmt == 'G' { 'E' } else { 'e' };
            if exp < -4 || exp >= eprec {
                if prec > nd {
                    prec = nd;
                }
                return fmt_e(sign, &digs, dp, prec - 1, efmt);
            }
            if prec > dp {
                prec = nd;
            }
            fmt_f(sign, &digs, dp, (prec - dp).max(0))
        }
    }
}

/// `strconv`'s `%x` of a float64, shortest: `0x1.8p+01`.
fn hex_float(f: f64, upper: bool) -> String {
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let text = if f == 0.0 {
        "0x0p+00".to_string()
    } else {
        let bits = f.to_bits();
        let mut exp = ((bits >> 52) & 0x7ff) as i32;
        let mut mant = bits & ((1u64 << 52) - 1);
        if exp == 0 {
            exp = -1022;
            while mant & (1u64 << 52) == 0 {
                mant <<= 1;
                exp -= 1;
            }
            mant &= (1u64 << 52) - 1;
        } else {
            exp -= 1023;
        }
        let digits = format!("{mant:013x}");
        let digits = digits.trim_end_matches('0');
        let point = if digits.is_empty() {
            String::new()
        } else {
            format!(".{digits}")
        };
        format!(
            "0x1{point}p{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    };
    let text = format!("{sign}{text}");
    if upper { text.to_uppercase() } else { text }
}

fn digit(digs: &[u8], i: i32) -> char {
    if i >= 0 && (i as usize) < digs.len() {
        digs[i as usize] as char
    } else {
        '0'
    }
}

fn fmt_e(sign: &str, digs: &[u8], dp: i32, prec: i32, fmt: char) -> String {
    let mut out = String::from(sign);
    out.push(digit(digs, 0));
    if prec > 0 {
        out.push('.');
        for i in 1..=prec {
            out.push(digit(digs, i));
        }
    }
    out.push(fmt);
    let exp = if digs.is_empty() { 0 } else { dp - 1 };
    out.push(if exp < 0 { '-' } else { '+' });
    let exp = exp.abs();
    if exp < 10 {
        out.push('0');
    }
    out.push_str(&exp.to_string());
    out
}

fn fmt_f(sign: &str, digs: &[u8], dp: i32, prec: i32) -> String {
    let mut out = String::from(sign);
    if dp > 0 {
        for i in 0..dp {
            out.push(digit(digs, i));
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 0..prec {
            out.push(digit(digs, dp + i));
        }
    }
    out
}

pub(super) use super::unicode::is_print;

fn escape_rune(out: &mut String, c: char, quote: char, ascii: bool) {
    if let Some(b) = raw_byte_of(c) {
        // A byte that is not UTF-8: strconv writes it as `\xNN`.
        out.push_str(&format!("\\x{b:02x}"));
        return;
    }
    match c {
        _ if c == quote => {
            out.push('\\');
            out.push(c);
        }
        '\\' => out.push_str("\\\\"),
        _ if (ascii && (c as u32) < 0x80 && is_print(c)) || (!ascii && is_print(c)) => out.push(c),
        '\u{7}' => out.push_str("\\a"),
        '\u{8}' => out.push_str("\\b"),
        '\u{c}' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// Go's `strconv.Quote` (`ascii`: `QuoteToASCII`).
pub(super) fn go_quote(text: &str, ascii: bool) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        escape_rune(&mut out, c, '"', ascii);
    }
    out.push('"');
    out
}

/// Go's `strconv.QuoteRune` (`ascii`: `QuoteRuneToASCII`).
fn go_quote_rune(c: char, ascii: bool) -> String {
    let mut out = String::from("'");
    escape_rune(&mut out, c, '\'', ascii);
    out.push('\'');
    out
}

fn can_backquote(s: &str) -> bool {
    s.chars().all(|c| {
        c != '`' && c != '\u{feff}' && (c == '\t' || !((c as u32) < 0x20 || c == '\u{7f}'))
    })
}

/// The flags, width and precision of one verb.
#[derive(Clone, Copy, Default)]
struct Flags {
    plus: bool,
    minus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    plus_v: bool,
    sharp_v: bool,
    wid: Option<usize>,
    prec: Option<usize>,
}

struct Printer {
    out: String,
    f: Flags,
}

impl Printer {
    fn pad(&mut self, s: &str) {
        let Some(wid) = self.f.wid else {
            self.out.push_str(s);
            return;
        };
        let n = s.chars().count();
        if wid <= n {
            self.out.push_str(s);
            return;
        }
        let fill = if self.f.zero && !self.f.minus {
            '0'
        } else {
            ' '
        };
        let padding: String = std::iter::repeat_n(fill, wid - n).collect();
        if self.f.minus {
            self.out.push_str(s);
            self.out.push_str(&" ".repeat(wid - n));
        } else {
            self.out.push_str(&padding);
            self.out.push_str(s);
        }
    }

    fn bad_verb(&mut self, verb: char, v: &Value) {
        self.out.push_str("%!");
        self.out.push(verb);
        self.out.push('(');
        if v.is_nil_interface() {
            self.out.push_str("<nil>");
        } else {
            self.out.push_str(&v.type_name());
            self.out.push('=');
            self.print_value(v, 'v', 0);
        }
        self.out.push(')');
    }

    fn fmt_integer(&mut self, u: u64, negative: bool, base: u32, verb: char, upper: bool) {
        let f = self.f;
        let mut prec = 0usize;
        if let Some(p) = f.prec {
            prec = p;
            if p == 0 && u == 0 {
                let saved = self.f.zero;
                self.f.zero = false;
                self.pad("");
                self.f.zero = saved;
                return;
            }
        } else if f.zero && !f.minus && f.wid.is_some() {
            prec = f.wid.unwrap_or_default();
            if negative || f.plus || f.space {
                prec = prec.saturating_sub(1);
            }
        }
        let mut digits = match base {
            2 => format!("{u:b}"),
            8 => format!("{u:o}"),
            16 if upper => format!("{u:X}"),
            16 => format!("{u:x}"),
            _ => u.to_string(),
        };
        if digits.len() < prec {
            digits = format!("{}{digits}", "0".repeat(prec - digits.len()));
        }
        let mut prefix = String::new();
        if f.sharp {
            match base {
                2 => prefix.push_str("0b"),
                8 if !digits.starts_with('0') => prefix.push('0'),
                16 => prefix.push_str(if upper { "0X" } else { "0x" }),
                _ => {}
            }
        }
        if verb == 'O' {
            prefix = format!("0o{prefix}");
        }
        let sign = if negative {
            "-"
        } else if f.plus {
            "+"
        } else if f.space {
            " "
        } else {
            ""
        };
        let saved = self.f.zero;
        self.f.zero = false;
        self.pad(&format!("{sign}{prefix}{digits}"));
        self.f.zero = saved;
    }

    fn fmt_int(&mut self, v: i128, verb: char, unsigned: bool) -> bool {
        let (u, neg) = (v.unsigned_abs() as u64, v < 0);
        match verb {
            'v' if self.f.sharp_v && unsigned => {
                let s = format!("0x{u:x}");
                self.pad(&s);
            }
            'v' | 'd' => self.fmt_integer(u, neg, 10, verb, false),
            'b' => self.fmt_integer(u, neg, 2, verb, false),
            'o' | 'O' => self.fmt_integer(u, neg, 8, verb, false),
            'x' => self.fmt_integer(u, neg, 16, verb, false),
            'X' => self.fmt_integer(u, neg, 16, verb, true),
            'c' => {
                let c = rune_of(v);
                self.pad(&c.to_string());
            }
            'q' => {
                let s = go_quote_rune(rune_of(v), self.f.plus);
                self.pad(&s);
            }
            'U' => {
                let mut s = format!("U+{:04X}", v as u64);
                if let Some(p) = self.f.prec
                    && s.len() - 2 < p
                {
                    s = format!("U+{}{:X}", "0".repeat(p - (s.len() - 2)), v as u64);
                }
                if self.f.sharp {
                    let c = rune_of(v);
                    if (0..=0x10ffff).contains(&v) && is_print(c) {
                        s = format!("{s} '{c}'");
                    }
                }
                let saved = self.f.zero;
                self.f.zero = false;
                self.pad(&s);
                self.f.zero = saved;
            }
            _ => return false,
        }
        true
    }

    fn fmt_float(&mut self, v: f64, verb: char) -> bool {
        let (fmt, prec) = match verb {
            'v' => ('g', -1),
            'b' | 'g' | 'G' | 'x' | 'X' => (verb, -1),
            'f' | 'e' | 'E' => (verb, 6),
            'F' => ('f', 6),
            _ => return false,
        };
        let prec = self.f.prec.map_or(prec, |p| p as i32);
        let mut num = format_float(v, fmt, if fmt == 'b' { -1 } else { prec });
        if !num.starts_with(['-', '+']) {
            num.insert(0, '+');
        }
        if self.f.space && num.starts_with('+') && !self.f.plus {
            num.replace_range(0..1, " ");
        }
        if num[1..].starts_with(['I', 'N']) {
            let saved = self.f.zero;
            self.f.zero = false;
            if num[1..].starts_with('N') && !self.f.space && !self.f.plus {
                num.remove(0);
            }
            self.pad(&num);
            self.f.zero = saved;
            return true;
        }
        if self.f.sharp && verb != 'b' {
            let mut digits: i32 = match verb {
                'v' | 'g' | 'G' | 'x' | 'X' => {
                    if prec == -1 {
                        6
                    } else {
                        prec
                    }
                }
                _ => 0,
            };
            let mut tail = String::new();
            let mut body = String::new();
            let mut has_point = false;
            let mut saw_nonzero = false;
            let bytes: Vec<char> = num.chars().collect();
            let mut i = 1;
            while i < bytes.len() {
                let c = bytes[i];
                match c {
                    '.' => {
                        has_point = true;
                        body.push(c);
                    }
                    'p' | 'P' => {
                        tail = bytes[i..].iter().collect();
                        break;
                    }
                    'e' | 'E' if verb != 'x' && verb != 'X' => {
                        tail = bytes[i..].iter().collect();
                        break;
                    }
                    _ => {
                        if c != '0' {
                            saw_nonzero = true;
                        }
                        if saw_nonzero {
                            digits -= 1;
                        }
                        body.push(c);
                    }
                }
                i += 1;
            }
            if !has_point {
                if body == "0" {
                    digits -= 1;
                }
                body.push('.');
            }
            while digits > 0 {
                body.push('0');
                digits -= 1;
            }
            num = format!("{}{body}{tail}", &num[..1]);
        }
        if self.f.plus || !num.starts_with('+') {
            if self.f.zero
                && !self.f.minus
                && let Some(wid) = self.f.wid
                && wid > num.len()
            {
                self.out.push_str(&num[..1]);
                self.out.push_str(&"0".repeat(wid - num.len()));
                self.out.push_str(&num[1..]);
                return true;
            }
            self.pad(&num);
            return true;
        }
        let rest = num[1..].to_string();
        self.pad(&rest);
        true
    }

    fn fmt_string(&mut self, s: &str, verb: char) -> bool {
        let truncated = |s: &str, prec: Option<usize>| -> String {
            match prec {
                Some(p) => s.chars().take(p).collect(),
                None => s.to_string(),
            }
        };
        match verb {
            'v' if self.f.sharp_v => {
                let s = go_quote(s, false);
                self.pad(&s);
            }
            'v' | 's' => {
                let s = truncated(s, self.f.prec);
                self.pad(&s);
            }
            'q' => {
                let s = truncated(s, self.f.prec);
                let q = if self.f.sharp && can_backquote(&s) {
                    format!("`{s}`")
                } else {
                    go_quote(&s, self.f.plus)
                };
                self.pad(&q);
            }
            'x' | 'X' => {
                let bytes = go_bytes(s);
                let n = self.f.prec.map_or(bytes.len(), |p| p.min(bytes.len()));
                let mut out = String::new();
                for (i, b) in bytes[..n].iter().enumerate() {
                    if self.f.space && i > 0 {
                        out.push(' ');
                    }
                    if self.f.sharp && (self.f.space || i == 0) {
                        out.push_str(if verb == 'x' { "0x" } else { "0X" });
                    }
                    if verb == 'x' {
                        out.push_str(&format!("{b:02x}"));
                    } else {
                        out.push_str(&format!("{b:02X}"));
                    }
                }
                self.pad(&out);
            }
            _ => return false,
        }
        true
    }

    /// The elements of a slice or struct, `separator` between them, one level deeper.
    fn print_items(&mut self, items: &[Value], separator: &str, verb: char, depth: usize) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(separator);
            }
            self.print_value(item, verb, depth + 1);
        }
    }

    /// `printArg` at depth 0, `printValue` below it.
    fn print_value(&mut self, v: &Value, verb: char, depth: usize) {
        if depth > MAX_DEPTH {
            // A map or list that holds itself (`set $d "self" $d`): Go's fmt recurses until
            // the program dies; render marks the text, and an output holding it is refused.
            self.out.push(CYCLE);
            return;
        }
        if verb == 'T' && depth == 0 {
            let t = v.type_name();
            let saved = self.f.prec;
            self.pad(&t);
            self.f.prec = saved;
            return;
        }
        let handled = match v {
            Value::Missing | Value::Nil => {
                if depth == 0 && verb != 'v' {
                    self.bad_verb(verb, v);
                } else if self.f.sharp_v && depth > 0 {
                    self.out.push_str("interface {}(nil)");
                } else if depth > 0 {
                    self.out.push_str("<nil>");
                } else {
                    self.pad("<nil>");
                }
                true
            }
            Value::Bool(b) => {
                if matches!(verb, 't' | 'v') {
                    self.pad(if *b { "true" } else { "false" });
                    true
                } else {
                    false
                }
            }
            Value::Int(i) | Value::Int64(i) => self.fmt_int(*i as i128, verb, false),
            Value::Uint(u, _) => self.fmt_int(*u as i128, verb, true),
            Value::Float(f) => self.fmt_float(*f, verb),
            Value::Str(s) => self.fmt_string(s, verb),
            Value::Version(version, _) => {
                if matches!(verb, 'v' | 's' | 'x' | 'X' | 'q') && !self.f.sharp_v {
                    let s = version.to_string();
                    self.fmt_string(&s, if verb == 'v' { 's' } else { verb })
                } else if self.f.sharp_v {
                    self.out.push_str(&format!(
                        "{}semver.Version{{major:0x{:x}, minor:0x{:x}, patch:0x{:x}, pre:{}, metadata:{}, original:{}}}",
                        if *_pointer_marker(v) { "&" } else { "" },
                        version.major,
                        version.minor,
                        version.patch,
                        go_quote(&version.pre, false),
                        go_quote(&version.metadata, false),
                        go_quote(&version.original, false)
                    ));
                    true
                } else {
                    // fmt prints the struct's fields (`&{1 2 3   v1.2.3}` for %d...).
                    if *_pointer_marker(v) && depth == 0 {
                        self.out.push('&');
                    }
                    self.out.push('{');
                    let fields = [
                        Value::Uint(version.major, UintType::U64),
                        Value::Uint(version.minor, UintType::U64),
                        Value::Uint(version.patch, UintType::U64),
                        Value::str(version.pre.as_str()),
                        Value::str(version.metadata.as_str()),
                        Value::str(version.original.as_str()),
                    ];
                    self.print_items(&fields, " ", verb, depth);
                    self.out.push('}');
                    true
                }
            }
            Value::Time(time) => {
                if self.f.sharp_v {
                    // time.Time is a GoStringer.
                    self.out.push_str(&time.go_syntax());
                } else if matches!(verb, 'v' | 's' | 'x' | 'X' | 'q') {
                    // ... and a Stringer.
                    let s = time.go_string();
                    self.fmt_string(&s, if verb == 'v' { 's' } else { verb });
                } else {
                    // fmt prints the struct's fields: its location is a pointer.
                    self.out.push(ADDRESS);
                }
                true
            }
            Value::Slice(s) => {
                if self.f.sharp_v {
                    self.out.push_str(&v.type_name());
                    if s.nil {
                        self.out.push_str("(nil)");
                        return;
                    }
                    self.out.push('{');
                    self.print_items(&s.items, ", ", verb, depth);
                    self.out.push('}');
                } else {
                    self.out.push('[');
                    self.print_items(&s.items, " ", verb, depth);
                    self.out.push(']');
                }
                true
            }
            Value::Map(m) => {
                if self.f.sharp_v {
                    self.out.push_str(&v.type_name());
                    if m.nil {
                        self.out.push_str("(nil)");
                        return;
                    }
                    self.out.push('{');
                } else {
                    self.out.push_str("map[");
                }
                for (i, (k, item)) in m.entries.borrow().iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(if self.f.sharp_v { ", " } else { " " });
                    }
                    self.print_value(&Value::str(k.as_str()), verb, depth + 1);
                    self.out.push(':');
                    self.print_value(item, verb, depth + 1);
                }
                self.out.push(if self.f.sharp_v { '}' } else { ']' });
                true
            }
        };
        if !handled {
            self.bad_verb(verb, v);
        }
    }
}

fn _pointer_marker(v: &Value) -> &bool {
    match v {
        Value::Version(_, pointer) => pointer,
        _ => &false,
    }
}

/// How deep values nest before render calls them cyclic.
pub(super) const MAX_DEPTH: usize = 200;

/// The mark of a value printed past [`MAX_DEPTH`] (one of the last private-use code points).
pub(super) const CYCLE: char = '\u{10fefe}';

/// The mark of a `time.Time` printed field by field (Go prints its location's address).
pub(super) const ADDRESS: char = '\u{10fefd}';

fn rune_of(v: i128) -> char {
    if (0..=0x10ffff).contains(&v) {
        char::from_u32(v as u32).unwrap_or('\u{fffd}')
    } else {
        '\u{fffd}'
    }
}

fn parse_num(s: &[u8], start: usize, end: usize) -> (usize, bool, usize) {
    let mut num = 0usize;
    let mut is_num = false;
    let mut i = start;
    if start >= end {
        return (0, false, end);
    }
    while i < end && s[i].is_ascii_digit() {
        if num > 1_000_000 {
            return (0, false, end);
        }
        num = num * 10 + (s[i] - b'0') as usize;
        is_num = true;
        i += 1;
    }
    (num, is_num, i)
}

/// `fmt.Sprintf`.
pub(super) fn sprintf(format: &str, args: &[Value]) -> String {
    let s = format.as_bytes();
    let end = s.len();
    let mut p = Printer {
        out: String::new(),
        f: Flags::default(),
    };
    let mut arg_num = 0usize;
    let mut reordered = false;
    let mut i = 0;
    // `[n]` argument indexes.
    let arg_number =
        |arg_num: usize, i: usize, reordered: &mut bool, good: &mut bool| -> (usize, usize, bool) {
            if i >= end || s[i] != b'[' {
                return (arg_num, i, false);
            }
            *reordered = true;
            let rest = &s[i..];
            let (index, wid, ok) = if rest.len() < 3 {
                (0usize, 1usize, false)
            } else {
                match rest.iter().position(|&c| c == b']') {
                    Some(close) if close >= 1 => {
                        let (n, is_num, newi) = parse_num(rest, 1, close);
                        if !is_num || newi != close || n == 0 {
                            if is_num && newi == close && n == 0 {
                                (usize::MAX, close + 1, true)
                            } else {
                                (0, close + 1, false)
                            }
                        } else {
                            (n - 1, close + 1, true)
                        }
                    }
                    _ => (0, 1, false),
                }
            };
            if ok && index < args.len() {
                return (index, i + wid, true);
            }
            *good = false;
            (arg_num, i + wid, ok)
        };
    while i < end {
        let mut good = true;
        let last = i;
        while i < end && s[i] != b'%' {
            i += 1;
        }
        if i > last {
            p.out.push_str(&format[last..i]);
        }
        if i >= end {
            break;
        }
        i += 1;
        p.f = Flags::default();
        let mut fast = false;
        while i < end {
            match s[i] {
                b'#' => p.f.sharp = true,
                b'0' => p.f.zero = !p.f.minus,
                b'+' => p.f.plus = true,
                b'-' => {
                    p.f.minus = true;
                    p.f.zero = false;
                }
                b' ' => p.f.space = true,
                c if c.is_ascii_lowercase() && arg_num < args.len() => {
                    if c == b'v' {
                        p.f.sharp_v = p.f.sharp;
                        p.f.sharp = false;
                        p.f.plus_v = p.f.plus;
                        p.f.plus = false;
                    }
                    p.print_value(&args[arg_num], c as char, 0);
                    arg_num += 1;
                    i += 1;
                    fast = true;
                    break;
                }
                _ => break,
            }
            i += 1;
        }
        if fast {
            continue;
        }
        let (n, ni, mut after_index) = arg_number(arg_num, i, &mut reordered, &mut good);
        arg_num = n;
        i = ni;
        if i < end && s[i] == b'*' {
            i += 1;
            let (w, ok, next) = int_from_arg(args, arg_num);
            arg_num = next;
            if !ok {
                p.out.push_str("%!(BADWIDTH)");
            } else if w < 0 {
                p.f.wid = Some(w.unsigned_abs() as usize);
                p.f.minus = true;
                p.f.zero = false;
            } else {
                p.f.wid = Some(w as usize);
            }
            after_index = false;
        } else {
            let (w, present, ni) = parse_num(s, i, end);
            i = ni;
            if present {
                p.f.wid = Some(w);
                if after_index {
                    good = false;
                }
            }
        }
        if i + 1 < end && s[i] == b'.' {
            i += 1;
            if after_index {
                good = false;
            }
            let (n, ni, ai) = arg_number(arg_num, i, &mut reordered, &mut good);
            arg_num = n;
            i = ni;
            after_index = ai;
            if i < end && s[i] == b'*' {
                i += 1;
                let (w, ok, next) = int_from_arg(args, arg_num);
                arg_num = next;
                // A negative precision is no precision, and says so.
                if w < 0 || !ok {
                    p.f.prec = None;
                    p.out.push_str("%!(BADPREC)");
                } else {
                    p.f.prec = Some(w as usize);
                }
                after_index = false;
            } else {
                let (w, _, ni) = parse_num(s, i, end);
                i = ni;
                p.f.prec = Some(w);
            }
        }
        if !after_index {
            let (n, ni, _) = arg_number(arg_num, i, &mut reordered, &mut good);
            arg_num = n;
            i = ni;
        }
        if i >= end {
            p.out.push_str("%!(NOVERB)");
            break;
        }
        let verb = format[i..].chars().next().expect("not at the end");
        i += verb.len_utf8();
        if verb == '%' {
            p.out.push('%');
        } else if !good {
            p.out.push_str(&format!("%!{verb}(BADINDEX)"));
        } else if arg_num >= args.len() {
            p.out.push_str(&format!("%!{verb}(MISSING)"));
        } else {
            if verb == 'v' {
                p.f.sharp_v = p.f.sharp;
                p.f.sharp = false;
                p.f.plus_v = p.f.plus;
                p.f.plus = false;
            }
            p.print_value(&args[arg_num], verb, 0);
            arg_num += 1;
        }
    }
    if !reordered && arg_num < args.len() {
        p.f = Flags::default();
        p.out.push_str("%!(EXTRA ");
        for (i, arg) in args[arg_num..].iter().enumerate() {
            if i > 0 {
                p.out.push_str(", ");
            }
            if arg.is_nil_interface() {
                p.out.push_str("<nil>");
            } else {
                p.out.push_str(&arg.type_name());
                p.out.push('=');
                p.print_value(arg, 'v', 0);
            }
        }
        p.out.push(')');
    }
    p.out
}

fn int_from_arg(args: &[Value], arg_num: usize) -> (i64, bool, usize) {
    if arg_num >= args.len() {
        return (0, false, arg_num);
    }
    let (n, ok) = match &args[arg_num] {
        Value::Int(i) | Value::Int64(i) => (*i, true),
        Value::Uint(u, _) if *u <= i64::MAX as u64 => (*u as i64, true),
        _ => (0, false),
    };
    if !(-1_000_000..=1_000_000).contains(&n) {
        return (0, false, arg_num + 1);
    }
    (n, ok, arg_num + 1)
}

/// `%v` of one value, as `fmt.Sprint` prints it.
pub(super) fn print(v: &Value) -> String {
    let mut p = Printer {
        out: String::new(),
        f: Flags::default(),
    };
    p.print_value(v, 'v', 0);
    p.out
}

/// `fmt.Sprint`: a space between operands when neither is a string.
pub(super) fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    let is_string = |v: &Value| matches!(v, Value::Str(_));
    for (i, arg) in args.iter().enumerate() {
        if i > 0 && !is_string(arg) && !is_string(&args[i - 1]) {
            out.push(' ');
        }
        out.push_str(&print(arg));
    }
    out
}

/// `fmt.Sprintln`: spaces between all operands, a newline after.
pub(super) fn sprintln(args: &[Value]) -> String {
    let mut out = args.iter().map(print).collect::<Vec<_>>().join(" ");
    out.push('\n');
    out
}

/// `%v` of an element of a typed slice (for `[]int` and `[]string` built by functions).
#[allow(dead_code)]
pub(super) fn elem_name(elem: Elem) -> &'static str {
    match elem {
        Elem::Any => "interface {}",
        Elem::Str => "string",
        Elem::Int => "int",
        Elem::Slices => "[]interface {}",
    }
}
