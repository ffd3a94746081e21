//! TLS from PEM files, with rustls.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls;

use crate::{ServerError, TlsFiles};

pub fn acceptor(files: &TlsFiles) -> Result<tokio_rustls::TlsAcceptor, ServerError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| {
            ServerError::Tls(format!(
                "cannot read certificates from `{}`: {e}",
                files.cert.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(ServerError::Tls(format!(
            "`{}` holds no PEM certificate",
            files.cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| {
        ServerError::Tls(format!(
            "cannot read a private key from `{}`: {e}",
            files.key.display()
        ))
    })?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| ServerError::Tls(e.to_string()))?;
    let builder = match &files.client_ca {
        Some(path) => builder.with_client_cert_verifier(client_verifier(path, provider)?),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| {
        ServerError::Tls(format!(
            "`{}` and `{}` do not make a usable certificate and key: {e}",
            files.cert.display(),
            files.key.display()
        ))
    })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// Client certificates required and checked against the CAs in `path`, as ChartMuseum's
/// `--tls-ca-cert` asks (Go's `RequireAndVerifyClientCert`).
fn client_verifier(
    path: &Path,
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, ServerError> {
    let mut roots = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            ServerError::Tls(format!(
                "cannot read CA certificates from `{}`: {e}",
                path.display()
            ))
        })?;
    let (added, _) = roots.add_parsable_certificates(certs);
    if added == 0 {
        return Err(ServerError::Tls(format!(
            "`{}` holds no usable PEM CA certificate for checking client certificates",
            path.display()
        )));
    }
    rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| {
            ServerError::Tls(format!(
                "cannot check client certificates with the CAs in `{}`: {e}",
                path.display()
            ))
        })
}
