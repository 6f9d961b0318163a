//! Listening, reloading on SIGHUP, and shutting down gracefully on SIGTERM or SIGINT:
//! stop accepting, let the runs in flight finish for a bounded time, then cancel the
//! sandbox runs left, so no sandbox process outlives the server.
use crate::ServerState;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};

/// Where to listen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address (`127.0.0.1:8080`; port 0 for any free port).
    Tcp(std::net::SocketAddr),
    /// A Unix socket path (`unix:/run/skillgate.sock`).
    Unix(PathBuf),
}

impl std::str::FromStr for Listen {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err("`unix:` needs a socket path, e.g. unix:/run/skillgate.sock".into());
            }
            return Ok(Listen::Unix(path.into()));
        }
        s.parse().map(Listen::Tcp).map_err(|_| {
            format!("`{s}` is neither an IP:PORT address (127.0.0.1:8080) nor unix:PATH")
        })
    }
}

/// Serves `state` on `listen` until SIGTERM or SIGINT, reloading on SIGHUP. `ready` is
/// called with the address actually bound (a TCP port 0 resolved) once the server accepts.
/// Over TLS when the state has a TLS configuration ([`ServerState::with_tls`]; TCP only).
pub async fn serve(
    state: Arc<ServerState>,
    listen: Listen,
    drain: Duration,
    ready: impl FnOnce(&str),
) -> Result<(), String> {
    let tls = state.tls_config();
    let mut term = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
    let mut hup = signal(SignalKind::hangup()).map_err(|e| e.to_string())?;
    let app = crate::router(state.clone());
    let stop = Arc::new(tokio::sync::Notify::new());
    let stopped = {
        let stop = stop.clone();
        async move { stop.notified().await }
    };
    let mut server = match &listen {
        Listen::Tcp(addr) => {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            let bound = l.local_addr().map_err(|e| e.to_string())?;
            ready(&bound.to_string());
            match tls {
                Some(config) => {
                    let l = crate::tls::TlsListener::new(l, config).map_err(|e| e.to_string())?;
                    tokio::spawn(async move {
                        axum::serve(l, app).with_graceful_shutdown(stopped).await
                    })
                }
                None => tokio::spawn(async move {
                    axum::serve(l, app).with_graceful_shutdown(stopped).await
                }),
            }
        }
        Listen::Unix(_) if tls.is_some() => {
            return Err("TLS is for a TCP address, not a unix socket (whose file permissions decide who connects)".into());
        }
        Listen::Unix(path) => {
            // A socket left by an earlier server would refuse the bind.
            if std::fs::symlink_metadata(path)
                .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
            {
                let _ = std::fs::remove_file(path);
            }
            let l = tokio::net::UnixListener::bind(path)
                .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
            ready(&format!("unix:{}", path.display()));
            tokio::spawn(async move { axum::serve(l, app).with_graceful_shutdown(stopped).await })
        }
    };
    loop {
        tokio::select! {
            r = &mut server => {
                return r.map_err(|e| e.to_string())?.map_err(|e| e.to_string());
            }
            _ = hup.recv() => {
                match state.reload().await {
                    Ok(_) => tracing::info!("reloaded the configuration on SIGHUP"),
                    Err(e) => tracing::error!(error = %e, "SIGHUP: the new configuration is refused; the old one stays"),
                }
            }
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    tracing::info!(
        drain_s = drain.as_secs(),
        "stopping: draining the runs in flight"
    );
    state.start_draining();
    stop.notify_one();
    let result = match tokio::time::timeout(drain, &mut server).await {
        Ok(r) => r,
        Err(_) => {
            tracing::warn!("the drain time is over: cancelling the sandbox runs left");
            skillgate_sandbox::cancel_runs();
            match tokio::time::timeout(Duration::from_secs(10), &mut server).await {
                Ok(r) => r,
                Err(_) => {
                    server.abort();
                    return Err("runs still in flight after their cancellation".into());
                }
            }
        }
    };
    if let Listen::Unix(path) = &listen {
        let _ = std::fs::remove_file(path);
    }
    result
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}
