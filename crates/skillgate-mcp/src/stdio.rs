//! The stdio transport, with the JSON-RPC framing errors answered.
//!
//! rmcp drops a line that is not JSON, or not a JSON-RPC message, without a word; a client
//! then waits forever. Lines pass through a filter first: one that does not parse is
//! answered `-32700` (parse error), a JSON value that is no JSON-RPC 2.0 message `-32600`
//! (invalid request), with the request's id when it has one, and neither reaches the
//! server. Every other line goes to rmcp unchanged; the answers of both are written
//! whole, one line each.
use crate::server::{Gateway, SkillServer};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Most bytes of one message line (larger ones are answered `-32600`).
pub const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// The error answer a line deserves before it reaches the server, if any.
pub fn framing_error(line: &[u8]) -> Option<Value> {
    let error = |code: i64, message: &str, id: Value| {
        Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
    };
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return error(-32700, &format!("parse error: {e}"), Value::Null),
    };
    let Value::Object(message) = &value else {
        return error(
            -32600,
            "invalid request: a message is a JSON-RPC 2.0 object",
            Value::Null,
        );
    };
    let id = match message.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let versioned = message.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let method_ok = match message.get("method") {
        None => message.contains_key("result") || message.contains_key("error"),
        Some(m) => m.is_string(),
    };
    if !versioned || !method_ok {
        return error(
            -32600,
            "invalid request: not a JSON-RPC 2.0 request, notification or response",
            id,
        );
    }
    None
}

/// Serves `caller` the skills of `gateway` on `input` and `output` (stdin and stdout)
/// until the client closes its side.
pub async fn serve<R, W>(
    gateway: Arc<Gateway>,
    caller: skillgate::Caller,
    input: R,
    output: W,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    use rmcp::ServiceExt as _;
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let (errors, mut error_rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match (&mut input)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut line)
                .await
            {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            let answer = if line.len() > MAX_LINE_BYTES {
                Some(
                    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600,
                    "message": format!("invalid request: over {MAX_LINE_BYTES} bytes")}}),
                )
            } else {
                framing_error(text)
            };
            if let Some(answer) = answer {
                if errors.send(answer).is_err() {
                    break;
                }
                if line.len() > MAX_LINE_BYTES {
                    // The rest of the line is not a message either.
                    break;
                }
                continue;
            }
            if to_server.write_all(text).await.is_err() || to_server.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
        // Dropping `to_server` ends the server's input: the session ends.
    });
    let writer = tokio::spawn(async move {
        let mut output = output;
        let mut from_server = BufReader::new(from_server);
        let mut line = Vec::new();
        loop {
            tokio::select! {
                read = from_server.read_until(b'\n', &mut line) => {
                    if !matches!(read, Ok(n) if n > 0) {
                        break;
                    }
                    if output.write_all(&line).await.is_err() {
                        break;
                    }
                    line.clear();
                }
                Some(answer) = error_rx.recv() => {
                    let mut text = answer.to_string().into_bytes();
                    text.push(b'\n');
                    if output.write_all(&text).await.is_err() {
                        break;
                    }
                }
            }
            if output.flush().await.is_err() {
                break;
            }
        }
    });
    let running = SkillServer::for_caller(gateway, caller)
        .serve((server_in, server_out))
        .await?;
    running.waiting().await?;
    let _ = writer.await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_errors_get_the_standard_codes() {
        assert_eq!(
            framing_error(b"{\"jsonrpc\":").unwrap()["error"]["code"],
            -32700
        );
        assert_eq!(framing_error(b"[1]").unwrap()["error"]["code"], -32600);
        let no_version = framing_error(br#"{"id": 7, "method": "ping"}"#).unwrap();
        assert_eq!(no_version["error"]["code"], -32600);
        assert_eq!(no_version["id"], 7);
        let bad_method = framing_error(br#"{"jsonrpc": "2.0", "id": "a", "method": 1}"#).unwrap();
        assert_eq!(bad_method["id"], "a");
        for fine in [
            &br#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#[..],
            br#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
            br#"{"jsonrpc": "2.0", "id": 1, "result": {}}"#,
        ] {
            assert_eq!(framing_error(fine), None);
        }
    }
}
