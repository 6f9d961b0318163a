//! One execute request on a kernel's websocket channels (the Jupyter server's JSON
//! protocol: one message per text frame, its `channel` named in it), and the messages
//! read back until the kernel is idle again.
use super::gateway::{Gateway, gateway_error};
use super::prelude::EXIT_VARIABLE;
use crate::capture::Capture;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use skillgate_core::ExecError;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// An open websocket to one kernel.
pub(crate) type Channels =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens the kernel's channels.
pub(crate) async fn open(gateway: &Gateway, kernel: &str) -> Result<Channels, ExecError> {
    let what = "opening the kernel's channels";
    let mut request = gateway
        .channels_url(kernel)
        .into_client_request()
        .map_err(|e| gateway_error(gateway.base(), what, e))?;
    if let Some(auth) = gateway.authorization() {
        let value = auth
            .parse()
            .map_err(|_| gateway_error(gateway.base(), what, "the token is not a valid header"))?;
        request
            .headers_mut()
            .insert(hyper::header::AUTHORIZATION, value);
    }
    let (ws, _) =
        tokio::time::timeout(gateway.timeout(), tokio_tungstenite::connect_async(request))
            .await
            .map_err(|_| gateway_error(gateway.base(), what, "no answer"))?
            .map_err(|e| {
                let auth = matches!(&e, tokio_tungstenite::tungstenite::Error::Http(r)
            if r.status() == 401 || r.status() == 403);
                if auth {
                    gateway_error(
                        gateway.base(),
                        what,
                        "authentication failed: check [executor] token",
                    )
                } else {
                    gateway_error(gateway.base(), what, e)
                }
            })?;
    Ok(ws)
}

/// How the execution ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The prelude ran to its end: the skill's exit code.
    Exited(i32),
    /// The kernel restarted or died during the run (`os._exit`, a crash, a signal): no
    /// reply will come, and output it had not flushed is lost.
    Died(String),
}

#[derive(Debug, Deserialize)]
struct Incoming {
    #[serde(default)]
    channel: String,
    #[serde(default)]
    msg_type: String,
    #[serde(default)]
    parent_header: ParentHeader,
    #[serde(default)]
    content: serde_json::Value,
}

#[derive(Debug, Default, Deserialize)]
struct ParentHeader {
    #[serde(default)]
    msg_id: String,
}

/// The execute request of `code`, its message id `msg_id`, reading [`EXIT_VARIABLE`]
/// back.
pub(crate) fn execute_request(code: &str, msg_id: &str, session: &str) -> serde_json::Value {
    serde_json::json!({
        "header": {
            "msg_id": msg_id,
            "session": session,
            "username": "skillgate",
            "msg_type": "execute_request",
            "version": "5.3",
        },
        "parent_header": {},
        "metadata": {},
        "channel": "shell",
        "content": {
            "code": code,
            "silent": false,
            "store_history": false,
            "user_expressions": { "exit": EXIT_VARIABLE },
            "allow_stdin": false,
            "stop_on_error": true,
        },
    })
}

/// Sends the execute request and reads the kernel's messages into `stdout` and `stderr`
/// (the `stream` messages, by name) until its reply came and it is idle again, or it
/// died. The caller bounds it with the deadline.
pub(crate) async fn execute(
    ws: &mut Channels,
    base: &str,
    request: serde_json::Value,
    stdout: &mut Capture,
    stderr: &mut Capture,
) -> Result<Ended, ExecError> {
    let what = "running the skill";
    let msg_id = request["header"]["msg_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    ws.send(Message::text(request.to_string()))
        .await
        .map_err(|e| gateway_error(base, what, e))?;
    let mut reply: Option<Result<i32, String>> = None;
    let mut idle = false;
    while let Some(frame) = ws.next().await {
        let text = match frame.map_err(|e| gateway_error(base, what, e))? {
            Message::Text(t) => t,
            Message::Close(_) => {
                return Err(gateway_error(base, what, "the gateway closed the channels"));
            }
            _ => continue,
        };
        let msg: Incoming = serde_json::from_str(text.as_str())
            .map_err(|e| gateway_error(base, what, format!("a message not understood: {e}")))?;
        if msg.parent_header.msg_id != msg_id {
            // The kernel's own status: a restart or death ends the run.
            if msg.msg_type == "status" {
                let state = msg.content["execution_state"].as_str().unwrap_or_default();
                if state == "restarting" || state == "dead" {
                    return Ok(Ended::Died(state.to_string()));
                }
            }
            continue;
        }
        match (msg.channel.as_str(), msg.msg_type.as_str()) {
            ("iopub", "stream") => {
                let text = msg.content["text"].as_str().unwrap_or_default().as_bytes();
                match msg.content["name"].as_str() {
                    Some("stdout") => stdout.push(text),
                    Some("stderr") => stderr.push(text),
                    _ => {}
                }
            }
            ("iopub", "error") => {
                // The prelude catches everything the skill raises; an error here is the
                // prelude's own (an interrupt between its statements).
                let line = format!(
                    "{}: {}\n",
                    msg.content["ename"].as_str().unwrap_or("error"),
                    msg.content["evalue"].as_str().unwrap_or_default()
                );
                stderr.push(line.as_bytes());
            }
            ("iopub", "status") => {
                let state = msg.content["execution_state"].as_str().unwrap_or_default();
                match state {
                    "idle" => idle = true,
                    "restarting" | "dead" => return Ok(Ended::Died(state.to_string())),
                    _ => {}
                }
            }
            ("shell", "execute_reply") => reply = Some(exit_code_of(&msg.content)),
            _ => {}
        }
        if let (true, Some(reply)) = (idle, &reply) {
            return reply
                .clone()
                .map(Ended::Exited)
                .map_err(|why| gateway_error(base, what, why));
        }
    }
    Err(gateway_error(
        base,
        what,
        "the channels ended before the kernel replied",
    ))
}

/// The exit code from an `execute_reply`'s content.
fn exit_code_of(content: &serde_json::Value) -> Result<i32, String> {
    if content["status"] != "ok" {
        return Err(format!(
            "the kernel answered `{}` ({} {})",
            content["status"].as_str().unwrap_or("?"),
            content["ename"].as_str().unwrap_or_default(),
            content["evalue"].as_str().unwrap_or_default()
        ));
    }
    let exit = &content["user_expressions"]["exit"];
    exit["data"]["text/plain"]
        .as_str()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .filter(|c| (0..=255).contains(c))
        .ok_or_else(|| format!("no exit code in the kernel's reply: {exit}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_comes_from_the_user_expression() {
        let ok = serde_json::json!({"status": "ok", "user_expressions": {"exit": {
            "status": "ok", "data": {"text/plain": "3"}, "metadata": {}}}});
        assert_eq!(exit_code_of(&ok), Ok(3));
        // The variable was never set (the prelude did not finish): no exit code, an error.
        let missing = serde_json::json!({"status": "ok", "user_expressions": {"exit": {
            "status": "error", "ename": "NameError"}}});
        assert!(exit_code_of(&missing).is_err());
        let failed = serde_json::json!({"status": "error", "ename": "KeyboardInterrupt"});
        assert!(
            exit_code_of(&failed)
                .unwrap_err()
                .contains("KeyboardInterrupt")
        );
        // Not a code a process could exit with.
        let odd = serde_json::json!({"status": "ok", "user_expressions": {"exit": {
            "status": "ok", "data": {"text/plain": "'3'"}}}});
        assert!(exit_code_of(&odd).is_err());
    }

    #[test]
    fn the_request_reads_the_exit_variable_back_and_allows_no_stdin() {
        let r = execute_request("pass", "m1", "s1");
        assert_eq!(r["header"]["msg_type"], "execute_request");
        assert_eq!(r["content"]["user_expressions"]["exit"], EXIT_VARIABLE);
        assert_eq!(r["content"]["allow_stdin"], false);
        assert_eq!(r["channel"], "shell");
    }
}
