//! sprig's deterministic cryptography: `decryptAES` (AES-256-CBC, the IV first, the key the
//! password's bytes padded or cut to 32) and `derivePassword` (the Master Password algorithm:
//! scrypt, then HMAC-SHA256 picks a template and its characters), each as sprig v3.3.0 computes
//! it, Go's panics included (a short or misaligned ciphertext, a padding byte past its length).
//!
//! Their random siblings (`encryptAES`, the key and certificate generators) stay refused: CAPI
//! would compute a new value at every reconcile.

use super::super::value::{Value, go_bytes, go_string};
use super::encoding::{B64, decode};
use super::{Out, Table, Ty, sig, string, text};
use aes::cipher::{BlockDecrypt, KeyInit, generic_array::GenericArray};
use hmac::Mac;

pub(super) const TABLE: Table = &[
    sig("decryptAES", &[Ty::Str, Ty::Str], None),
    sig(
        "derivePassword",
        &[Ty::Uint32, Ty::Str, Ty::Str, Ty::Str, Ty::Str],
        None,
    ),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    match name {
        "decryptAES" => decrypt_aes(&go_bytes(text(&args[0])), &go_bytes(text(&args[1]))),
        "derivePassword" => {
            let Value::Uint(counter, _) = args[0] else {
                unreachable!("the parameter is a uint32")
            };
            let [password_type, password, user, site] =
                [&args[1], &args[2], &args[3], &args[4]].map(|a| go_bytes(text(a)));
            string(go_string(&derive_password(
                counter as u32,
                &password_type,
                &password,
                &user,
                &site,
            )))
        }
        _ => unreachable!("{name} is in the table"),
    }
}

/// sprig's `decryptAES`: Go's error, or the text of the panic the template engine recovers.
fn decrypt_aes(password: &[u8], crypt64: &[u8]) -> Out {
    if crypt64.is_empty() {
        return string(String::new());
    }
    let mut key = [0u8; 32];
    let n = password.len().min(32);
    key[..n].copy_from_slice(&password[..n]);
    let crypt = decode(crypt64, B64, 4, 6)
        .map_err(|at| format!("illegal base64 data at input byte {at}"))?;
    if crypt.len() < 16 {
        return Err(format!(
            "runtime error: slice bounds out of range [:16] with capacity {}",
            crypt.len()
        ));
    }
    let (iv, body) = crypt.split_at(16);
    if body.len() % 16 != 0 {
        return Err("crypto/cipher: input not full blocks".into());
    }
    let cipher = aes::Aes256::new(GenericArray::from_slice(&key));
    let mut previous: &[u8] = iv;
    let mut plain = Vec::with_capacity(body.len());
    for block in body.chunks(16) {
        let mut out = GenericArray::clone_from_slice(block);
        cipher.decrypt_block(&mut out);
        plain.extend(out.iter().zip(previous).map(|(a, b)| a ^ b));
        previous = block;
    }
    let Some(&pad) = plain.last() else {
        return Err("runtime error: index out of range [-1]".into());
    };
    let Some(end) = plain.len().checked_sub(usize::from(pad)) else {
        return Err(format!(
            "runtime error: slice bounds out of range [:{}]",
            plain.len() as i64 - i64::from(pad)
        ));
    };
    string(go_string(&plain[..end]))
}

const MASTER_PASSWORD_SEED: &[u8] = b"com.lyndir.masterpassword";

/// The templates of each password type.
const PASSWORD_TEMPLATES: &[(&[u8], &[&[u8]])] = &[
    (
        b"maximum",
        &[b"anoxxxxxxxxxxxxxxxxx", b"axxxxxxxxxxxxxxxxxno"],
    ),
    (
        b"long",
        &[
            b"CvcvnoCvcvCvcv",
            b"CvcvCvcvnoCvcv",
            b"CvcvCvcvCvcvno",
            b"CvccnoCvcvCvcv",
            b"CvccCvcvnoCvcv",
            b"CvccCvcvCvcvno",
            b"CvcvnoCvccCvcv",
            b"CvcvCvccnoCvcv",
            b"CvcvCvccCvcvno",
            b"CvcvnoCvcvCvcc",
            b"CvcvCvcvnoCvcc",
            b"CvcvCvcvCvccno",
            b"CvccnoCvccCvcv",
            b"CvccCvccnoCvcv",
            b"CvccCvccCvcvno",
            b"CvcvnoCvccCvcc",
            b"CvcvCvccnoCvcc",
            b"CvcvCvccCvccno",
            b"CvccnoCvcvCvcc",
            b"CvccCvcvnoCvcc",
            b"CvccCvcvCvccno",
        ],
    ),
    (b"medium", &[b"CvcnoCvc", b"CvcCvcno"]),
    (b"short", &[b"Cvcn"]),
    (b"basic", &[b"aaanaaan", b"aannaaan", b"aaannaaa"]),
    (b"pin", &[b"nnnn"]),
];

/// The characters a template character stands for.
fn template_characters(element: u8) -> &'static [u8] {
    match element {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        b'x' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
        _ => unreachable!("templates use only these characters"),
    }
}

/// sprig's `derivePassword`, its message for an unknown type included.
fn derive_password(
    counter: u32,
    password_type: &[u8],
    password: &[u8],
    user: &[u8],
    site: &[u8],
) -> Vec<u8> {
    let Some((_, templates)) = PASSWORD_TEMPLATES
        .iter()
        .find(|(name, _)| *name == password_type)
    else {
        let mut message = b"cannot find password template ".to_vec();
        message.extend_from_slice(password_type);
        return message;
    };
    // Go writes the lengths as uint32: a string past 4 GiB cannot reach a template.
    let mut salt = MASTER_PASSWORD_SEED.to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user);
    let params = scrypt::Params::new(15, 8, 2, 64).expect("sprig's scrypt parameters are valid");
    let mut key = [0u8; 64];
    scrypt::scrypt(password, &salt, &params, &mut key).expect("a 64-byte key is a valid length");

    let mut message = MASTER_PASSWORD_SEED.to_vec();
    message.extend_from_slice(&(site.len() as u32).to_be_bytes());
    message.extend_from_slice(site);
    message.extend_from_slice(&counter.to_be_bytes());
    let mut mac = <hmac::Hmac<sha2::Sha256> as Mac>::new_from_slice(&key)
        .expect("HMAC takes a key of any length");
    mac.update(&message);
    let seed = mac.finalize().into_bytes();
    let template = templates[usize::from(seed[0]) % templates.len()];
    template
        .iter()
        .enumerate()
        .map(|(i, &element)| {
            let characters = template_characters(element);
            characters[usize::from(seed[i + 1]) % characters.len()]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(out: Out) -> String {
        match out.unwrap() {
            Value::Str(s) => s.to_string(),
            other => panic!("not a string: {other:?}"),
        }
    }

    #[test]
    fn decrypt_aes_reads_what_go_encrypted() {
        // sprig's encryptAES of "plaintext" with "secretkey", the IV "0123456789abcdef"
        // (Go's crypto/aes and crypto/cipher).
        let crypt = b"MDEyMzQ1Njc4OWFiY2RlZkytjKYrhHCd2pW6LIu3KTs=";
        assert_eq!(text(decrypt_aes(b"secretkey", crypt)), "plaintext");
        assert_eq!(text(decrypt_aes(b"k", b"")), "");
        // Go panics; the template engine returns the panic as the call's error.
        let error = |password: &[u8], crypt: &[u8]| decrypt_aes(password, crypt).unwrap_err();
        assert!(error(b"k", b"AAAA").contains("slice bounds"));
        assert!(error(b"k", b"AAAAAAAAAAAAAAAAAAAAAA==").contains("index out of range"));
        assert!(error(b"k", b"AAAAAAAAAAAAAAAAAAAAAAA=").contains("not full blocks"));
        assert!(error(b"k", b"!!!!").contains("illegal base64"));
    }

    #[test]
    fn derive_password_is_the_master_password_algorithm() {
        // sprig's own test (crypto_test.go): each type for "password", "user", "example.com".
        for (counter, kind, password) in [
            (1, "long", "ZedaFaxcZaso9*"),
            (2, "long", "Fovi2@JifpTupx"),
            (1, "maximum", "pf4zS1LjCg&LjhsZ7T2~"),
            (1, "medium", "ZedJuz8$"),
            (1, "basic", "pIS54PLs"),
            (1, "short", "Zed5"),
            (1, "pin", "6685"),
        ] {
            let derived = derive_password(
                counter,
                kind.as_bytes(),
                b"password",
                b"user",
                b"example.com",
            );
            assert_eq!(
                String::from_utf8(derived).unwrap(),
                password,
                "{kind} {counter}"
            );
        }
        assert_eq!(
            derive_password(1, b"nope", b"p", b"u", b"s"),
            b"cannot find password template nope"
        );
    }
}
