// skillgate Test panel. Every value from the server is set as text (textContent, value,
// new Option): a report is shaped by the code it ran, so none of it is ever parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const PNG_BASE64_MAGIC = "iVBORw0KGgo"; // the 8-byte PNG signature, base64
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function headers(json) {
  const h = { Authorization: "Bearer " + $("key").value.trim() };
  if (json) h["Content-Type"] = "application/json";
  return h;
}

function say(text) {
  $("message").textContent = text;
}

// The JSON of an answer, or an Error naming the server's error (or the status).
async function answer(resp) {
  let body = null;
  try {
    body = await resp.json();
  } catch (_) {
    body = null;
  }
  if (!resp.ok) {
    const e = body && body.error;
    const what = e && typeof e.message === "string" ? e.code + ": " + e.message : "";
    throw new Error("HTTP " + resp.status + (what ? " " + what : ""));
  }
  return body;
}

async function loadSkills() {
  say("");
  const select = $("skill");
  select.replaceChildren();
  try {
    const body = await answer(await fetch("/v1/skills", { headers: headers(false) }));
    for (const s of body.skills || []) {
      const label = s.description ? s.name + " — " + s.description : s.name;
      select.add(new Option(label, s.name));
    }
    if (select.options.length === 0) {
      say("no skill this key may run");
      return;
    }
    await loadSample();
  } catch (e) {
    say(e.message);
  }
}

async function loadSample() {
  const name = $("skill").value;
  if (!name) return;
  try {
    const url = "/v1/skills/" + encodeURIComponent(name) + "/sample-input";
    const body = await answer(await fetch(url, { headers: headers(false) }));
    $("input").value = JSON.stringify(body.input === null ? {} : body.input, null, 2);
  } catch (e) {
    say(e.message);
  }
}

function clearResult() {
  for (const id of ["status", "exit-code", "duration", "request-id", "stdout", "stderr"]) {
    $(id).textContent = "";
  }
  $("findings").replaceChildren();
  $("artifacts").replaceChildren();
}

function show(report) {
  $("status").textContent = String(report.status);
  $("exit-code").textContent = report.exit_code === null ? "none" : String(report.exit_code);
  $("duration").textContent = String(report.duration_ms) + " ms";
  $("request-id").textContent = String(report.request_id || "");
  $("stdout").textContent = String(report.stdout) + (report.stdout_truncated ? "\n[truncated]" : "");
  $("stderr").textContent = String(report.stderr) + (report.stderr_truncated ? "\n[truncated]" : "");
  for (const f of report.findings || []) {
    const li = document.createElement("li");
    const where = f.line ? " (line " + f.line + ")" : "";
    li.textContent = "[" + f.severity + "] " + f.layer + " " + f.rule_id + where + ": " + f.message;
    $("findings").append(li);
  }
  for (const a of report.artifacts || []) {
    const figure = document.createElement("figure");
    const caption = document.createElement("figcaption");
    caption.textContent = String(a.name) + " (" + a.size + " bytes)";
    const content = String(a.content_base64);
    // Only a real PNG becomes an image, and only as a data: URL of type image/png.
    if (content.startsWith(PNG_BASE64_MAGIC) && BASE64.test(content)) {
      const img = document.createElement("img");
      img.alt = String(a.name);
      img.className = "artifact";
      img.src = "data:image/png;base64," + content;
      figure.append(img);
    }
    figure.append(caption);
    $("artifacts").append(figure);
  }
}

async function run(event) {
  event.preventDefault();
  say("");
  clearResult();
  const result = $("result");
  const name = $("skill").value;
  if (!name) {
    say("pick a skill first (Load skills)");
    return;
  }
  let input;
  try {
    input = JSON.parse($("input").value);
  } catch (e) {
    say("the input is not valid JSON: " + e.message);
    return;
  }
  result.dataset.state = "running";
  $("run").disabled = true;
  try {
    const url = "/v1/skills/" + encodeURIComponent(name) + "/runs";
    const resp = await fetch(url, {
      method: "POST",
      headers: headers(true),
      body: JSON.stringify({ input }),
    });
    show(await answer(resp));
    result.dataset.state = "done";
  } catch (e) {
    say(e.message);
    result.dataset.state = "error";
  } finally {
    $("run").disabled = false;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("load").addEventListener("click", loadSkills);
  $("skill").addEventListener("change", loadSample);
  $("panel").addEventListener("submit", run);
});
