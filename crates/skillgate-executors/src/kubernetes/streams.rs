//! A run's streams: stdout and stderr read apart from one attach, and `/out` copied out of
//! the keeper container as a tar stream and collected.
use super::pod::{self, KEEPER_CONTAINER, PodPlan};
use super::{API_CALL_TIMEOUT, call, cluster_error};
use crate::archive::{ArchiveNames, archive_budget, collect_archive};
use crate::capture::Capture;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams};
use skillgate_core::{ExecError, Finding};
use tokio::io::{AsyncRead, AsyncReadExt};

/// Reads `stream` to its end into `into` (kept up to its cap, the rest drained).
pub(super) async fn drain(stream: Option<impl AsyncRead + Unpin>, into: &mut Capture) {
    let Some(mut r) = stream else { return };
    let mut buf = vec![0u8; 16 << 10];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => into.push(&buf[..n]),
        }
    }
}

/// Copies `/out` out of the keeper as a tar stream, and collects it.
pub(super) async fn artifacts(
    pods: &Api<Pod>,
    name: &str,
    plan: &PodPlan,
) -> Result<(Vec<skillgate_core::Artifact>, Vec<Finding>), ExecError> {
    let budget = archive_budget(&plan.limits);
    let cmd = pod::collect_command(plan.language, &plan.interpreter[0]);
    let mut exec = call(
        "copying /out from the keeper",
        pods.exec(
            name,
            cmd,
            &AttachParams {
                container: Some(KEEPER_CONTAINER.into()),
                stdin: false,
                stdout: true,
                stderr: true,
                max_stdout_buf_size: Some(256 << 10),
                ..Default::default()
            },
        ),
    )
    .await?;
    let stdout = exec.stdout();
    let stderr = exec.stderr();
    let mut tar = Vec::new();
    let mut errors = Capture::new(4096);
    let read = async {
        let mut over = false;
        if let Some(mut r) = stdout {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match r.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) if tar.len() as u64 + n as u64 > budget => {
                        over = true;
                        break;
                    }
                    Ok(n) => tar.extend_from_slice(&buf[..n]),
                }
            }
        }
        drain(stderr, &mut errors).await;
        let status = exec.take_status();
        let _ = exec.join().await;
        let status = match status {
            Some(s) => s.await,
            None => None,
        };
        (over, status)
    };
    let (over, status) = tokio::time::timeout(API_CALL_TIMEOUT, read)
        .await
        .map_err(|_| cluster_error("copying /out from the keeper", "timed out"))?;
    if over {
        let f = crate::archive::over_budget(budget, pod::OUT_DIR);
        return Ok((Vec::new(), vec![f]));
    }
    if let Some(st) = status.filter(|s| s.status.as_deref() != Some("Success")) {
        return Err(cluster_error(
            "copying /out from the keeper",
            format!(
                "{} {}",
                st.message.unwrap_or_default(),
                String::from_utf8_lossy(&errors.kept)
            ),
        ));
    }
    let scratch =
        tempfile::tempdir().map_err(|e| ExecError::io("creating the artifact folder", e))?;
    let limits = plan.limits;
    tokio::task::spawn_blocking(move || {
        let found = collect_archive(&tar[..], ArchiveNames::UnderRoot, scratch.path(), &limits);
        drop(scratch);
        found
    })
    .await
    .map_err(|e| ExecError::Other(format!("collecting artifacts: {e}")))
}
