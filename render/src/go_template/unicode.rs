//! Go's `unicode` predicates and single-character case mappings (Unicode 15.0, Go's tables),
//! where Rust's differ (Rust's `is_uppercase` includes Other_Uppercase, its `to_uppercase` may
//! give several characters).

use unicode_general_category::{GeneralCategory as G, get_general_category};

/// `unicode.IsUpper`: category Lu.
pub(super) fn is_upper(c: char) -> bool {
    get_general_category(c) == G::UppercaseLetter
}

/// `unicode.IsLower`: category Ll.
pub(super) fn is_lower(c: char) -> bool {
    get_general_category(c) == G::LowercaseLetter
}

/// `unicode.IsTitle`: category Lt.
pub(super) fn is_title(c: char) -> bool {
    get_general_category(c) == G::TitlecaseLetter
}

/// `unicode.IsLetter`: category L.
pub(super) fn is_letter(c: char) -> bool {
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
    )
}

/// `unicode.IsNumber`: category N.
pub(super) fn is_number(c: char) -> bool {
    matches!(
        get_general_category(c),
        G::DecimalNumber | G::LetterNumber | G::OtherNumber
    )
}

/// `unicode.IsPunct`: category P.
pub(super) fn is_punct(c: char) -> bool {
    matches!(
        get_general_category(c),
        G::ConnectorPunctuation
            | G::DashPunctuation
            | G::OpenPunctuation
            | G::ClosePunctuation
            | G::InitialPunctuation
            | G::FinalPunctuation
            | G::OtherPunctuation
    )
}

/// `unicode.IsSpace`: the White_Space property (Rust's `is_whitespace`).
pub(super) fn is_space(c: char) -> bool {
    c.is_whitespace()
}

/// `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space.
pub(super) fn is_print(c: char) -> bool {
    c == ' '
        || !matches!(
            get_general_category(c),
            G::Control
                | G::Format
                | G::Surrogate
                | G::PrivateUse
                | G::Unassigned
                | G::SpaceSeparator
                | G::LineSeparator
                | G::ParagraphSeparator
        )
}

/// `unicode.ToUpper`: Unicode's simple (one character to one) uppercase mapping.
pub(super) fn to_upper(c: char) -> char {
    let mut u = c.to_uppercase();
    match (u.next(), u.next()) {
        (Some(one), None) => one,
        // Rust gives the full mapping; where it has several characters the simple one is the
        // Greek letters with iota subscript (to their titlecase forms), else none.
        _ => match c as u32 {
            0x1f80..=0x1f87 | 0x1f90..=0x1f97 | 0x1fa0..=0x1fa7 => {
                char::from_u32(c as u32 + 8).unwrap_or(c)
            }
            0x1fb3 => '\u{1fbc}',
            0x1fc3 => '\u{1fcc}',
            0x1ff3 => '\u{1ffc}',
            _ => c,
        },
    }
}

/// `unicode.ToTitle`: as [`to_upper`], but the Latin digraphs become their titlecase form.
pub(super) fn to_title(c: char) -> char {
    match c as u32 {
        0x1c4..=0x1c6 => '\u{1c5}',
        0x1c7..=0x1c9 => '\u{1c8}',
        0x1ca..=0x1cc => '\u{1cb}',
        0x1f1..=0x1f3 => '\u{1f2}',
        _ => to_upper(c),
    }
}

/// `unicode.ToLower`: one character to one.
pub(super) fn to_lower(c: char) -> char {
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(one), None) => one,
        _ => c,
    }
}
