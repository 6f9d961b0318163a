//! HTTPS for `serve` (`--tls-cert FILE --tls-key FILE`), and client certificates
//! (`--tls-client-ca FILE`: mutual TLS).
//!
//! With a client CA, a connection whose client presents no certificate that CA issued is
//! refused during the handshake, before any HTTP: only the platform's own systems reach
//! the API at all. The request's key or JWT still decides the caller, so a leaked key is
//! useless from a machine without a certificate, and a certificate alone runs nothing.
//!
//! Handshakes run on tasks of their own, at most [`MAX_HANDSHAKES`] at once and each for
//! at most [`HANDSHAKE_TIMEOUT`], so a slow or silent client holds neither the accept
//! loop nor memory.
use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// Handshakes in progress at once; more connections wait to be accepted.
pub const MAX_HANDSHAKES: usize = 256;

/// The longest a handshake may take.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the server's certificate and key, and the client CA, are.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate chain in PEM, the server's own first.
    pub cert: PathBuf,
    /// The private key in PEM (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// The CA certificates (PEM) that issue the clients' certificates; `None`: no client
    /// certificate is asked for.
    pub client_ca: Option<PathBuf>,
}

fn certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read the {what} {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "the {what} {} holds no PEM certificate",
            path.display()
        ));
    }
    Ok(certs)
}

impl TlsFiles {
    /// The rustls configuration: TLS 1.2 and 1.3, HTTP/1.1, ring's algorithms. Errors
    /// name the file and what is wrong with it (unreadable, no certificate, a key that
    /// does not match the certificate).
    pub fn server_config(&self) -> Result<Arc<ServerConfig>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = certs(&self.cert, "TLS certificate")?;
        let key = PrivateKeyDer::from_pem_file(&self.key)
            .map_err(|e| format!("cannot read the TLS key {}: {e}", self.key.display()))?;
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let builder = match &self.client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = rustls::RootCertStore::empty();
                for cert in certs(ca, "client CA")? {
                    roots.add(cert).map_err(|e| {
                        format!("the client CA {} does not load: {e}", ca.display())
                    })?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                        .build()
                        .map_err(|e| format!("the client CA {}: {e}", ca.display()))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder.with_single_cert(chain, key).map_err(|e| {
            format!(
                "the TLS key {} does not fit the certificate {}: {e}",
                self.key.display(),
                self.cert.display()
            )
        })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// The TLS configuration in use, swapped whole on reload (a renewed certificate): each
/// new connection takes the one in use when it arrives.
pub type SharedConfig = Arc<arc_swap::ArcSwap<ServerConfig>>;

/// A TCP listener whose connections are TLS streams, handshaken already.
#[derive(Debug)]
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    acceptor: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Accepts on `tcp` and hands out the connections whose handshake with `config`
    /// succeeded; the others are logged (at debug level: scanners and plain-HTTP clients
    /// are common) and closed.
    pub fn new(tcp: TcpListener, config: SharedConfig) -> std::io::Result<TlsListener> {
        let local = tcp.local_addr()?;
        let (tx, ready) = mpsc::channel(MAX_HANDSHAKES);
        let slots = Arc::new(Semaphore::new(MAX_HANDSHAKES));
        let acceptor = tokio::spawn(async move {
            loop {
                let Ok(slot) = slots.clone().acquire_owned().await else {
                    return;
                };
                let (stream, peer) = match tcp.accept().await {
                    Ok(conn) => conn,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let (acceptor, tx) = (TlsAcceptor::from(config.load_full()), tx.clone());
                tokio::spawn(async move {
                    let _slot = slot;
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(TlsListener {
            ready,
            local,
            acceptor,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.acceptor.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(conn) => conn,
            // The accept loop is gone (the runtime is shutting down): no more connections.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
