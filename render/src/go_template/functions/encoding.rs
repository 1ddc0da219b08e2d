//! sprig's encodings and checksums: base64 and base32 (Go's standard encodings, padded; a
//! decoding error is returned as the text, as sprig does), sha1/sha256/sha512 in hex, adler32
//! in decimal.

use super::super::value::{Value, go_bytes, go_string};
use super::{Out, Table, Ty, sig, string, text};
use sha1::Digest;

pub(super) const TABLE: Table = &[
    sig("b64enc", &[Ty::Str], None),
    sig("b64dec", &[Ty::Str], None),
    sig("b32enc", &[Ty::Str], None),
    sig("b32dec", &[Ty::Str], None),
    sig("sha1sum", &[Ty::Str], None),
    sig("sha256sum", &[Ty::Str], None),
    sig("sha512sum", &[Ty::Str], None),
    sig("adler32sum", &[Ty::Str], None),
];

pub(super) const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    let s = text(&args[0]);
    let bytes = go_bytes(s);
    match name {
        "b64enc" => string(encode(&bytes, B64, 3, 4, 6)),
        "b32enc" => string(encode(&bytes, B32, 5, 8, 5)),
        "b64dec" => string(match decode(&bytes, B64, 4, 6) {
            Ok(bytes) => go_string(&bytes),
            Err(at) => format!("illegal base64 data at input byte {at}"),
        }),
        "b32dec" => string(match decode(&bytes, B32, 8, 5) {
            Ok(bytes) => go_string(&bytes),
            Err(at) => format!("illegal base32 data at input byte {at}"),
        }),
        "sha1sum" => string(hex(&sha1::Sha1::digest(&bytes))),
        "sha256sum" => string(hex(&sha2::Sha256::digest(&bytes))),
        "sha512sum" => string(hex(&sha2::Sha512::digest(&bytes))),
        "adler32sum" => {
            let (mut a, mut b) = (1u32, 0u32);
            for &byte in bytes.iter() {
                a = (a + u32::from(byte)) % 65521;
                b = (b + a) % 65521;
            }
            string(((b << 16) | a).to_string())
        }
        _ => unreachable!("{name} is in the table"),
    }
}

/// Padded encoding: `group` input bytes become `chars` characters of `bits` bits each.
fn encode(input: &[u8], alphabet: &[u8], group: usize, chars: usize, bits: usize) -> String {
    let mut out = String::new();
    for chunk in input.chunks(group) {
        let mut value: u64 = 0;
        for i in 0..group {
            value = (value << 8) | u64::from(chunk.get(i).copied().unwrap_or(0));
        }
        let used = (chunk.len() * 8).div_ceil(bits);
        for i in 0..chars {
            if i < used {
                let shift = group * 8 - (i + 1) * bits;
                out.push(alphabet[((value >> shift) & ((1 << bits) - 1)) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Go's padded, non-strict decoding (`\r` and `\n` skipped); the error is the offset Go names.
pub(super) fn decode(
    src: &[u8],
    alphabet: &[u8],
    quantum: usize,
    bits: usize,
) -> Result<Vec<u8>, usize> {
    let lookup = |c: u8| alphabet.iter().position(|&a| a == c).map(|p| p as u64);
    let mut out = Vec::new();
    let mut si = 0;
    let skip_newlines = |si: &mut usize| {
        while *si < src.len() && (src[*si] == b'\n' || src[*si] == b'\r') {
            *si += 1;
        }
    };
    loop {
        let mut buf = vec![0u64; quantum];
        let mut dlen = quantum;
        let mut j = 0;
        let mut end = false;
        while j < quantum {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            }
            let c = src[si];
            si += 1;
            if let Some(v) = lookup(c) {
                buf[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Err(si - 1);
            }
            // Padding: how much must follow depends on where it starts.
            if j < 2 || (quantum == 8 && ![2, 4, 5, 7].contains(&j)) {
                return Err(si - 1);
            }
            let needed = quantum - j - 1;
            for _ in 0..needed {
                skip_newlines(&mut si);
                if si == src.len() {
                    return Err(src.len());
                }
                if src[si] != b'=' {
                    return Err(si - 1);
                }
                si += 1;
            }
            skip_newlines(&mut si);
            if si < src.len() {
                return Err(si);
            }
            dlen = j;
            end = true;
            break;
        }
        let mut value: u128 = 0;
        for v in &buf {
            value = (value << bits) | u128::from(*v);
        }
        let total_bytes = quantum * bits / 8;
        let bytes: Vec<u8> = (0..total_bytes)
            .map(|i| (value >> (8 * (total_bytes - 1 - i))) as u8)
            .collect();
        let keep = dlen * bits / 8;
        out.extend_from_slice(&bytes[..keep]);
        if end {
            return Ok(out);
        }
    }
}
