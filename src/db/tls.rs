//! TLS to the database as libpq's `sslmode` and `sslrootcert` ask for it. tokio-postgres knows
//! only `disable`, `prefer` and `require` and no `sslrootcert`, so [`split`] takes both out of
//! the URL (URL form `?sslmode=…&sslrootcert=…` or keyword form `sslmode=… sslrootcert=…`) and
//! [`connector`] builds the TLS client they describe:
//!
//! | sslmode | encrypted | server certificate checked |
//! |---|---|---|
//! | `disable` | never | — |
//! | `allow`, `prefer` (default) | when the server offers it | no |
//! | `require` | always | no; with `sslrootcert=FILE` as `verify-ca` (as libpq does) |
//! | `verify-ca` | always | signed by a CA in `sslrootcert` (default `~/.postgresql/root.crt`) |
//! | `verify-full` | always | as `verify-ca`, and it names the host of the URL |
//!
//! `sslrootcert=system` trusts the system's CAs instead of a file, and then (as libpq 16) only
//! `verify-full` is accepted, its default.
//!
//! The client is rustls with ring's cryptography, so building `spsa` needs no system OpenSSL.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// How much TLS the URL asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Option<SslMode> {
        Some(match text {
            "disable" => SslMode::Disable,
            // libpq's `allow` tries without TLS first; this client tries with it first, which
            // is no weaker (neither checks the certificate).
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    /// Whether the server's certificate is checked.
    pub fn verifies(self) -> bool {
        self >= SslMode::VerifyCa
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        })
    }
}

/// The CAs a verifying mode trusts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootCert {
    /// PEM certificates in a file (one or more).
    File(PathBuf),
    /// The system's trusted CAs (`sslrootcert=system`).
    System,
}

impl fmt::Display for RootCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RootCert::File(path) => write!(f, "the CA in {}", path.display()),
            RootCert::System => f.write_str("the system's CAs"),
        }
    }
}

/// What the URL's `sslmode` and `sslrootcert` come to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSettings {
    pub mode: SslMode,
    /// Set exactly when `mode` verifies.
    pub root: Option<RootCert>,
}

/// The URL without `sslmode` and `sslrootcert`, and the TLS settings they give; Err says what
/// is wrong with them.
pub fn split(url: &str) -> Result<(String, TlsSettings), String> {
    let (rest, params) = if url.contains("://") {
        take_query_params(url)
    } else {
        take_keyword_params(url)?
    };
    let mut mode = None;
    let mut root = None;
    for (key, value) in params {
        match key.as_str() {
            "sslmode" => mode = Some(value),
            _ => root = Some(value),
        }
    }
    Ok((rest, settings(mode.as_deref(), root.as_deref())?))
}

/// libpq's rules: a given CA file makes `require` verify the chain; a verifying mode without
/// `sslrootcert` reads `~/.postgresql/root.crt`; `sslrootcert=system` only with `verify-full`.
fn settings(mode: Option<&str>, root: Option<&str>) -> Result<TlsSettings, String> {
    let root = match root {
        None | Some("") => None,
        Some("system") => Some(RootCert::System),
        Some(path) => Some(RootCert::File(PathBuf::from(path))),
    };
    let mode = match mode {
        Some(text) => SslMode::parse(text).ok_or_else(|| {
            format!(
                "sslmode `{text}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
            )
        })?,
        None if root == Some(RootCert::System) => SslMode::VerifyFull,
        None => SslMode::Prefer,
    };
    if root == Some(RootCert::System) && mode != SslMode::VerifyFull {
        return Err(format!(
            "sslrootcert=system needs sslmode=verify-full (a weaker mode would trust any server a public CA signed), not {mode}"
        ));
    }
    let mode = match (&root, mode) {
        (Some(RootCert::File(_)), SslMode::Require) => SslMode::VerifyCa,
        (_, mode) => mode,
    };
    let root = match (root, mode.verifies()) {
        (_, false) => None,
        (Some(root), true) => Some(root),
        (None, true) => match std::env::var_os("HOME") {
            Some(home) => Some(RootCert::File(
                PathBuf::from(home).join(".postgresql/root.crt"),
            )),
            None => {
                return Err(format!(
                    "sslmode={mode} needs sslrootcert=FILE (the CA that signed the server's certificate)"
                ));
            }
        },
    };
    Ok(TlsSettings { mode, root })
}

/// The TLS client (rustls with ring: no system OpenSSL to build or install against).
pub type Connector = tokio_postgres_rustls::MakeRustlsConnect;

/// The TLS client the settings ask for: None for `disable`. Err names the CA file when it
/// cannot be read or holds no certificate.
pub fn connector(settings: &TlsSettings) -> Result<Option<Connector>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn ServerCertVerifier> = match settings.mode {
        SslMode::Disable => return Ok(None),
        // Encrypted, not authenticated (libpq's meaning): any certificate, but the handshake's
        // signatures are still checked against it.
        SslMode::Prefer | SslMode::Require => Arc::new(AnyCertificate(provider.clone())),
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let roots = match &settings.root {
                Some(RootCert::File(path)) => roots_from_file(path, settings.mode)?,
                Some(RootCert::System) | None => system_roots()?,
            };
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| format!("sslmode={}: {e}", settings.mode))?;
            if settings.mode == SslMode::VerifyCa {
                Arc::new(ChainOnly(webpki))
            } else {
                webpki
            }
        }
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("sslmode={}: TLS unavailable: {e}", settings.mode))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(Some(tokio_postgres_rustls::MakeRustlsConnect::new(config)))
}

/// The CAs of a PEM file, or why they cannot be had.
fn roots_from_file(path: &Path, mode: SslMode) -> Result<RootCertStore, String> {
    let shown = path.display();
    let pem = std::fs::read(path).map_err(|e| {
        format!(
            "sslrootcert {shown}: cannot read it ({e}); sslmode={mode} checks the server's certificate against the CA in this file"
        )
    })?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("sslrootcert {shown}: not PEM certificates: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "sslrootcert {shown}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it"
        ));
    }
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots
            .add(cert)
            .map_err(|e| format!("sslrootcert {shown}: not a CA certificate: {e}"))?;
    }
    Ok(roots)
}

/// The system's trusted CAs (`sslrootcert=system`), read from its certificate files.
fn system_roots() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        return Err(format!(
            "sslrootcert=system: no trusted CA certificates found on this machine{why}"
        ));
    }
    Ok(roots)
}

/// Why a TLS handshake failed, in words, from the error tokio-postgres returned; None when the
/// failure was not the certificate's.
pub fn certificate_failure(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut source = Some(e);
    while let Some(s) = source {
        // An I/O error's `source` skips the error it wraps: look inside it too.
        let inner = s
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>());
        if let Some(tls) = s.downcast_ref::<rustls::Error>().or(inner) {
            return Some(match tls {
                rustls::Error::InvalidCertificate(why) => format!(
                    "certificate verify failed: {}",
                    certificate_error_words(why)
                ),
                other => format!("TLS handshake failed: {other}"),
            });
        }
        source = s.source();
    }
    None
}

fn certificate_error_words(e: &CertificateError) -> String {
    match e {
        CertificateError::UnknownIssuer => "not signed by a trusted CA (unknown issuer)".into(),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            format!("the certificate does not name this host ({e})")
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            format!("the certificate has expired ({e})")
        }
        other => other.to_string(),
    }
}

/// `prefer` and `require`: encrypted, the certificate not checked (libpq's meaning), the
/// handshake's signatures checked against whatever certificate was sent.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted CA; the host need not be named. webpki checks
/// the chain before the name, so a name mismatch means the chain was good.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The TLS keys this module reads.
fn ours(key: &str) -> bool {
    key == "sslmode" || key == "sslrootcert"
}

/// `scheme://…?a=1&sslmode=x&b=2` → (`scheme://…?a=1&b=2`, [(sslmode, x)]), values
/// percent-decoded.
fn take_query_params(url: &str) -> (String, Vec<(String, String)>) {
    let Some((head, query)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    for part in query.split('&') {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        let key = percent_decode(key);
        if ours(&key) {
            taken.push((key, percent_decode(value)));
        } else {
            kept.push(part);
        }
    }
    let rest = if kept.is_empty() {
        head.to_string()
    } else {
        format!("{head}?{}", kept.join("&"))
    };
    (rest, taken)
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `host=h sslmode='x' dbname=d` → (`host=h dbname=d`, [(sslmode, x)]): libpq's keyword form,
/// values bare or in single quotes with `\` escapes, spaces allowed around `=`.
fn take_keyword_params(text: &str) -> Result<(String, Vec<(String, String)>), String> {
    let b = text.as_bytes();
    let space = |i: usize| i < b.len() && b[i].is_ascii_whitespace();
    let mut kept = String::new();
    let mut taken = Vec::new();
    let mut i = 0;
    loop {
        let start = i;
        while space(i) {
            i += 1;
        }
        if i == b.len() {
            kept.push_str(&text[start..]);
            return Ok((kept, taken));
        }
        let key_start = i;
        while i < b.len() && b[i] != b'=' && !space(i) {
            i += 1;
        }
        let key = &text[key_start..i];
        while space(i) {
            i += 1;
        }
        if i == b.len() || b[i] != b'=' {
            // Not a key=value pair: left for the URL parser to report.
            kept.push_str(&text[start..]);
            return Ok((kept, taken));
        }
        i += 1;
        while space(i) {
            i += 1;
        }
        let mut value = Vec::new();
        if b.get(i) == Some(&b'\'') {
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(format!("`{key}`: unterminated quoted value")),
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') if i + 1 < b.len() => {
                        value.push(b[i + 1]);
                        i += 2;
                    }
                    Some(&c) => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < b.len() && !space(i) {
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                value.push(b[i]);
                i += 1;
            }
        }
        if ours(key) {
            taken.push((
                key.to_string(),
                String::from_utf8_lossy(&value).into_owned(),
            ));
        } else {
            kept.push_str(&text[start..i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> Option<RootCert> {
        Some(RootCert::File(PathBuf::from(path)))
    }

    #[test]
    fn the_tls_keys_are_taken_out_of_both_url_forms() {
        let (rest, s) = split(
            "postgres://u:p@h:5/db?sslmode=verify-full&application_name=x&sslrootcert=/c%20a.crt",
        )
        .unwrap();
        assert_eq!(rest, "postgres://u:p@h:5/db?application_name=x");
        assert_eq!(s.mode, SslMode::VerifyFull);
        assert_eq!(s.root, file("/c a.crt"));
        let (rest, s) = split("postgresql://h/db?sslrootcert=/ca.crt&sslmode=verify-ca").unwrap();
        assert_eq!(rest, "postgresql://h/db");
        assert_eq!((s.mode, s.root), (SslMode::VerifyCa, file("/ca.crt")));
        let (rest, s) =
            split("host=h sslmode = verify-full  sslrootcert='/my ca\\'s.crt' dbname=d").unwrap();
        assert_eq!(rest, "host=h dbname=d");
        assert_eq!(
            (s.mode, s.root),
            (SslMode::VerifyFull, file("/my ca's.crt"))
        );
        let (rest, s) = split("postgres://h/db").unwrap();
        assert_eq!(rest, "postgres://h/db");
        assert_eq!((s.mode, s.root), (SslMode::Prefer, None));
        assert!(
            split("host=h sslrootcert='/x")
                .unwrap_err()
                .contains("unterminated")
        );
    }

    #[test]
    fn modes_follow_libpq() {
        let s = |m: Option<&str>, r: Option<&str>| settings(m, r);
        assert_eq!(s(Some("disable"), None).unwrap().mode, SslMode::Disable);
        assert_eq!(s(Some("allow"), None).unwrap().mode, SslMode::Prefer);
        assert_eq!(s(Some("require"), None).unwrap().mode, SslMode::Require);
        assert_eq!(s(Some("require"), None).unwrap().root, None);
        // A CA file given with `require` verifies the chain, as libpq does.
        let r = s(Some("require"), Some("/ca.crt")).unwrap();
        assert_eq!((r.mode, r.root), (SslMode::VerifyCa, file("/ca.crt")));
        // prefer never verifies, so a CA file changes nothing.
        assert_eq!(s(None, Some("/ca.crt")).unwrap().root, None);
        let sys = s(None, Some("system")).unwrap();
        assert_eq!(
            (sys.mode, sys.root),
            (SslMode::VerifyFull, Some(RootCert::System))
        );
        let weak = s(Some("verify-ca"), Some("system")).unwrap_err();
        assert!(
            weak.contains("verify-full") && weak.contains("verify-ca"),
            "{weak}"
        );
        let bad = s(Some("verify"), None).unwrap_err();
        assert!(
            bad.contains("`verify`") && bad.contains("verify-full"),
            "{bad}"
        );
        if let Some(home) = std::env::var_os("HOME") {
            let d = s(Some("verify-full"), None).unwrap();
            let want = PathBuf::from(home).join(".postgresql/root.crt");
            assert_eq!(d.root, Some(RootCert::File(want)));
        }
    }

    #[test]
    fn a_missing_or_wrong_ca_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.crt");
        let verify = |path: &std::path::Path| TlsSettings {
            mode: SslMode::VerifyFull,
            root: Some(RootCert::File(path.to_path_buf())),
        };
        let Err(err) = connector(&verify(&missing)) else {
            panic!("a missing CA file was accepted")
        };
        assert!(err.contains(&missing.display().to_string()), "{err}");
        assert!(err.contains("cannot read"), "{err}");
        let junk = dir.path().join("junk.crt");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let Err(err) = connector(&verify(&junk)) else {
            panic!("a file without certificates was accepted")
        };
        assert!(err.contains(&junk.display().to_string()), "{err}");
        // Unverified modes read no file.
        let require = TlsSettings {
            mode: SslMode::Require,
            root: None,
        };
        assert!(connector(&require).unwrap().is_some());
        let disable = TlsSettings {
            mode: SslMode::Disable,
            root: None,
        };
        assert!(connector(&disable).unwrap().is_none());
    }
}
