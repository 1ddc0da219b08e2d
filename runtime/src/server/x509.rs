//! Two fields of a certificate, read from its DER: the end of its validity (X.509
//! `tbsCertificate.validity.notAfter`), for the certificate expiry metric, and its subject's
//! common name, which names the caller of each request in the log. A few lines of DER walking:
//! no parser crate in the runtime for two fields.

/// One DER element: its tag, its contents and what follows it.
fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

const SEQUENCE: u8 = 0x30;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;

/// The fields of `tbsCertificate` from `validity` on (validity, subject, ...).
fn from_validity(der: &[u8]) -> Option<&[u8]> {
    let (SEQUENCE, certificate, _) = element(der)? else {
        return None;
    };
    let (SEQUENCE, tbs, _) = element(certificate)? else {
        return None;
    };
    let mut rest = tbs;
    // version ([0], optional), serialNumber, signature, issuer, then validity.
    if rest.first() == Some(&0xa0) {
        rest = element(rest)?.2;
    }
    for _ in 0..3 {
        rest = element(rest)?.2;
    }
    Some(rest)
}

/// `notAfter` of a DER certificate as Unix seconds; `None` when the bytes are not a
/// certificate this reader understands.
pub(crate) fn not_after(der: &[u8]) -> Option<i64> {
    let (SEQUENCE, validity, _) = element(from_validity(der)?)? else {
        return None;
    };
    let (_, _, after) = element(validity)?;
    let (tag, time, _) = element(after)?;
    parse_time(tag, std::str::from_utf8(time).ok()?)
}

/// The DER of the attribute type `commonName` (OID 2.5.4.3).
const COMMON_NAME: &[u8] = &[0x06, 0x03, 0x55, 0x04, 0x03];

/// The subject's common name (`CN`) of a DER certificate, when it has one in a string type;
/// `None` when the bytes are not a certificate this reader understands.
pub(crate) fn subject_common_name(der: &[u8]) -> Option<String> {
    let (_, _, rest) = element(from_validity(der)?)?;
    let (SEQUENCE, mut names, _) = element(rest)? else {
        return None;
    };
    // Name: SEQUENCE OF SET OF SEQUENCE { type OID, value }.
    while !names.is_empty() {
        let (_, set, next) = element(names)?;
        names = next;
        let mut attributes = set;
        while !attributes.is_empty() {
            let (_, attribute, next) = element(attributes)?;
            attributes = next;
            if let Some(value) = attribute.strip_prefix(COMMON_NAME) {
                let (tag, text, _) = element(value)?;
                // UTF8String, PrintableString, IA5String, T61String (read as Latin-1 by none).
                return matches!(tag, 0x0c | 0x13 | 0x16 | 0x14)
                    .then(|| String::from_utf8_lossy(text).into_owned());
            }
        }
    }
    None
}

/// `YYMMDDHHMMSSZ` (UTCTime: 50–99 are 19xx) or `YYYYMMDDHHMMSSZ` (GeneralizedTime), as DER
/// requires them: UTC, seconds, no fraction.
fn parse_time(tag: u8, text: &str) -> Option<i64> {
    let digits = text.strip_suffix('Z')?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (year, rest) = match (tag, digits.len()) {
        (UTC_TIME, 12) => {
            let yy: i64 = digits[..2].parse().ok()?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, &digits[2..])
        }
        (GENERALIZED_TIME, 14) => (digits[..4].parse().ok()?, &digits[4..]),
        _ => return None,
    };
    let field = |i: usize| rest[i..i + 2].parse::<i64>().ok();
    let (month, day) = (field(0)?, field(2)?);
    let (hour, minute, second) = (field(4)?, field(6)?, field(8)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_of_both_encodings() {
        assert_eq!(parse_time(UTC_TIME, "700101000000Z"), Some(0));
        assert_eq!(parse_time(UTC_TIME, "310709120000Z"), Some(1_941_364_800));
        assert_eq!(parse_time(UTC_TIME, "991231235959Z"), Some(946_684_799));
        assert_eq!(
            parse_time(GENERALIZED_TIME, "20510301000000Z"),
            Some(2_561_241_600)
        );
        assert_eq!(parse_time(UTC_TIME, "20510301000000Z"), None);
        assert_eq!(parse_time(UTC_TIME, "311309120000Z"), None);
        assert_eq!(parse_time(UTC_TIME, "3107091200Z"), None);
        assert_eq!(parse_time(UTC_TIME, "310709120000+0100"), None);
    }

    #[test]
    fn truncated_or_foreign_bytes_are_not_a_certificate() {
        assert_eq!(not_after(&[]), None);
        assert_eq!(not_after(&[0x30, 0x82, 0xff]), None);
        assert_eq!(not_after(b"-----BEGIN CERTIFICATE-----"), None);
        assert_eq!(not_after(&[0x30, 0x03, 0x30, 0x01, 0x02]), None);
    }

    #[cfg(feature = "dev-certs")]
    #[test]
    fn subject_common_names_of_certificates_rcgen_signs() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["ext".to_string()]).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "system:masters");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "capi-manager");
        let cert = params.self_signed(&key).unwrap();
        assert_eq!(
            subject_common_name(cert.der()).as_deref(),
            Some("capi-manager")
        );
        params.distinguished_name = rcgen::DistinguishedName::new();
        let cert = params.self_signed(&key).unwrap();
        assert_eq!(subject_common_name(cert.der()), None);
        assert_eq!(subject_common_name(&cert.der()[..40]), None);
    }

    #[cfg(feature = "dev-certs")]
    #[test]
    fn not_after_of_certificates_rcgen_signs() {
        for (date, expected) in [
            (rcgen::date_time_ymd(2031, 7, 9), 1_941_321_600),
            (rcgen::date_time_ymd(2051, 3, 1), 2_561_241_600),
        ] {
            let mut params = rcgen::CertificateParams::new(vec!["ext".to_string()]).unwrap();
            params.not_after = date;
            let key = rcgen::KeyPair::generate().unwrap();
            let cert = params.self_signed(&key).unwrap();
            assert_eq!(not_after(cert.der()), Some(expected), "{date}");
            for cut in [1, 10, cert.der().len() / 2] {
                assert_eq!(not_after(&cert.der()[..cut]), None);
            }
        }
    }
}
