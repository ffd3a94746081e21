//! `--tls`: a CA made for this sandbox, a server certificate it signs for 127.0.0.1 and
//! localhost, and a bearer token, so clients' TLS and token paths are exercised.

use std::sync::Arc;

use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::SandboxError;

/// What a client needs to trust and reach a TLS sandbox.
#[derive(Debug, Clone)]
pub struct TlsMaterial {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
    pub token: String,
}

impl TlsMaterial {
    pub fn generate() -> Result<TlsMaterial, SandboxError> {
        use rcgen::{
            BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
            KeyUsagePurpose,
        };
        let tls_err = |e: rcgen::Error| SandboxError::Tls(e.to_string());
        let ca_key = KeyPair::generate().map_err(tls_err)?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "chartkit-sandbox-ca");
        ca_params.distinguished_name = dn;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca_params.self_signed(&ca_key).map_err(tls_err)?;
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().map_err(tls_err)?;
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
                .map_err(tls_err)?;
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "kube-apiserver");
        params.distinguished_name = dn;
        let cert = params.signed_by(&key, &issuer).map_err(tls_err)?;
        let token: [u8; 24] = rand::random();
        Ok(TlsMaterial {
            ca_pem: ca_cert.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            token: hex::encode(token),
        })
    }

    pub fn acceptor(&self) -> Result<tokio_rustls::TlsAcceptor, SandboxError> {
        use rustls_pki_types::pem::PemObject as _;
        let cert = CertificateDer::from_pem_slice(self.cert_pem.as_bytes())
            .map_err(|e| SandboxError::Tls(e.to_string()))?;
        let key = PrivatePkcs8KeyDer::from_pem_slice(self.key_pem.as_bytes())
            .map_err(|e| SandboxError::Tls(e.to_string()))?;
        let mut config = tokio_rustls::rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(vec![cert], PrivateKeyDer::Pkcs8(key))
            .map_err(|e| SandboxError::Tls(e.to_string()))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
    }
}
