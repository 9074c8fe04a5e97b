//! The interop tour of OUR client (`mcp-client`) against any MCP server, checked against the
//! fixture files of scripts/interop (the same format the Python and TypeScript tours read).
//!
//! ```text
//! tour FIXTURES.json LABEL [--auto|--legacy|--modern|--revision REV] [--expect REV]
//!      (-- COMMAND [ARGS...] | --http URL)
//! ```
//!
//! Connects (stdio child or Streamable HTTP), then lists every tool (page by page) and calls
//! each with the fixture's arguments (or arguments made up from the input schema), answering
//! the server's sampling, elicitation and roots requests through the builder's handlers (in
//! 2026-07-28 they come inside `input_required` results), collecting progress and log
//! notifications; lists and reads every resource, lists the templates, gets every prompt, asks
//! for the fixture's completions and subscribes (legacy) or listens (2026-07-28). Where the
//! fixtures describe an answer, it must match. `--expect REV` fails the tour unless the
//! handshake settled on that revision. Prints one `  ok` / `  FAIL` line per step (the format
//! scripts/interop.sh counts) and a summary; exits 1 when a step failed.

mod pattern;

use std::collections::HashSet;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mcp_client::{CallOptions, CancelHandle, Client, ClientBuilder, Error, LoggingLevel, Revision};
use mcp_core::types::{
    CreateMessageResult, ElicitRequestParams, ElicitResult, Root, SubscriptionFilter,
};
use mcp_core::version::{Era, ProtocolVersion};
use mcp_stdio::ChildBuilder;
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::mpsc::{Receiver, sync_channel};

use pattern::{ROOT_URI, check, elicit_answer, sampling_answer, synthesize_args};

const USAGE: &str = "usage: tour FIXTURES.json LABEL [--auto|--legacy|--modern|--revision REV] \
[--expect REV] (-- COMMAND [ARGS...] | --http URL)";

/// How long a tool added after the start may take to be announced (as the other tours).
const LATE_TOOLS_WITHIN: Duration = Duration::from_secs(8);
/// How long a resource update may take to arrive.
const UPDATE_WITHIN: Duration = Duration::from_secs(5);
/// How long a tool's log messages may trail its result: over Streamable HTTP a server may send
/// them on the GET stream (rmcp does), which races the POST stream that carries the result.
const LOGS_WITHIN: Duration = Duration::from_secs(2);

/// What the server asked of the client's handlers, and the notifications it sent.
#[derive(Default)]
struct Record {
    current_tool: Option<String>,
    sampling: Vec<Value>,
    elicitation: Vec<Value>,
    roots: usize,
    logs: Vec<Value>,
}

type Shared = Arc<Mutex<Record>>;

fn lock(r: &Shared) -> MutexGuard<'_, Record> {
    r.lock().unwrap_or_else(|e| e.into_inner())
}

fn to_json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The answer to the elicitation the tool `tool` causes: the fixture's, or accept-everything.
fn elicitation_reply(fx: &Value, tool: Option<&str>, params: &Value) -> Value {
    let fixed = tool.and_then(|t| fx["tools"][t].get("answer"));
    match fixed {
        Some(a) => a.clone(),
        None if params.get("mode").and_then(Value::as_str) == Some("url") => {
            json!({"action": "accept"})
        }
        None => elicit_answer(params.get("requestedSchema")),
    }
}

/// A builder whose handlers answer as the other tours' clients do, and record the questions.
fn builder(fx: &Arc<Value>, rec: &Shared, revision: Revision) -> ClientBuilder {
    let (r1, r2, r3) = (rec.clone(), rec.clone(), rec.clone());
    let fx = Arc::clone(fx);
    Client::builder()
        .client_info("mcp-blocking-interop-rs", env!("CARGO_PKG_VERSION"))
        .revision(revision)
        .sampling(move |p| {
            lock(&r1).sampling.push(to_json(&p));
            serde_json::from_value::<CreateMessageResult>(sampling_answer())
                .map_err(mcp_core::jsonrpc::ErrorObject::internal)
        })
        .elicitation_with_url(move |p| {
            let params = to_json(&p);
            let tool = {
                let mut r = lock(&r2);
                r.elicitation.push(params.clone());
                r.current_tool.clone()
            };
            let reply = elicitation_reply(&fx, tool.as_deref(), &params);
            if let ElicitRequestParams::Url(_) = p {
                log::debug!("answering a URL elicitation without opening it");
            }
            serde_json::from_value::<ElicitResult>(reply)
                .map_err(mcp_core::jsonrpc::ErrorObject::internal)
        })
        .roots(move || {
            lock(&r3).roots += 1;
            vec![Root {
                uri: ROOT_URI.into(),
                name: Some("interop-root".into()),
                ..Default::default()
            }]
        })
}

struct Tour {
    fx: Arc<Value>,
    rec: Shared,
    steps: usize,
    failures: usize,
    tools_changed: Option<Receiver<()>>,
    /// The URIs of legacy `notifications/resources/updated`.
    updated: Option<Receiver<String>>,
    /// A signal per `notifications/message` (the messages themselves are in `rec`).
    logged: Option<Receiver<()>>,
}

impl Tour {
    /// Waits (at most LOGS_WITHIN) until `count` log messages have arrived in all.
    fn wait_for_logs(&mut self, count: usize) {
        let deadline = Instant::now() + LOGS_WITHIN;
        while lock(&self.rec).logs.len() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.logged.as_ref().map(|rx| rx.recv_timeout(left)) {
                Some(Ok(())) => {}
                _ => return,
            }
        }
    }

    fn ok(&mut self, name: &str, note: Option<String>) {
        self.steps += 1;
        match note {
            Some(n) => println!("  ok   {name} ({n})"),
            None => println!("  ok   {name}"),
        }
    }

    fn fail(&mut self, name: &str, why: impl std::fmt::Display) {
        self.steps += 1;
        self.failures += 1;
        println!("  FAIL {name}: {why}");
    }

    fn check(&mut self, name: &str, actual: &Value, pattern: &Value) -> bool {
        let errs = check(Some(actual), pattern, "$");
        if errs.is_empty() {
            self.ok(name, None);
            return true;
        }
        let mut got = actual.to_string();
        if got.len() > 600 {
            let mut cut = 600;
            while !got.is_char_boundary(cut) {
                cut -= 1;
            }
            got.truncate(cut);
        }
        let why = errs.iter().take(5).cloned().collect::<Vec<_>>().join("; ");
        self.fail(name, format!("{why}\n       got: {got}"));
        false
    }

    /// A step's result, or `None` after reporting its failure (the tour goes on).
    fn step<T>(&mut self, name: &str, r: Result<T, Error>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.fail(name, e);
                None
            }
        }
    }

    fn fixture(&self, key: &str) -> Value {
        self.fx.get(key).cloned().unwrap_or(Value::Null)
    }

    fn required(&self, kind: &str) -> Vec<String> {
        self.fx["required"][kind]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    }

    fn run(&mut self, client: &Client, expect: Option<ProtocolVersion>, started: Instant) {
        let modern = client.era() == Era::Modern;
        if let Some(want) = expect {
            if client.protocol_version() == want {
                self.ok("negotiated revision", Some(want.as_str().to_owned()));
            } else {
                let got = client.protocol_version();
                self.fail(
                    "negotiated revision",
                    format!("wanted {}, got {}", want.as_str(), got.as_str()),
                );
            }
        }
        let caps = client.server_capabilities().clone();
        if !modern {
            if let Some(()) = self.step("ping", client.ping()) {
                self.ok("ping", None);
            }
            if caps.get("logging").is_some() {
                if let Some(()) = self.step(
                    "logging/setLevel",
                    client.set_logging_level(LoggingLevel::Debug),
                ) {
                    self.ok("logging/setLevel debug", None);
                }
            }
        } else {
            // 2026-07-28: logs are asked for per request; the client puts the level in `_meta`.
            let _ = client.set_logging_level(LoggingLevel::Debug);
        }
        self.tools(client, modern, started);
        if caps.get("resources").is_some() || !self.required("resources").is_empty() {
            self.resources(client, modern);
        }
        if caps.get("prompts").is_some() || !self.required("prompts").is_empty() {
            self.prompts(client);
        }
        self.completions(client);
        self.updates(client, modern);
        self.cancels(client);
    }

    fn list_tools(&mut self, client: &Client, step: &str) -> Option<Vec<Value>> {
        let tools: Result<Vec<_>, _> = client.list_tools().collect();
        self.step(step, tools)
            .map(|t| t.iter().map(to_json).collect())
    }

    /// Fixture `tool_pages`: `tools/list` page by page must take exactly that many pages and
    /// list the same tools as the iterator did.
    fn tool_pages(&mut self, client: &Client, tools: &[Value]) {
        let Some(want) = self.fx.get("tool_pages").and_then(Value::as_u64) else {
            return;
        };
        let (mut pages, mut names, mut cursor) = (0u64, Vec::new(), None::<String>);
        loop {
            let Some(page) = self.step(
                "tools/list pages",
                client.list_tools_page(cursor.as_deref()),
            ) else {
                return;
            };
            pages += 1;
            names.extend(page.tools.into_iter().map(|t| t.name));
            cursor = page.next_cursor;
            if cursor.is_none() || pages > want {
                break;
            }
        }
        let listed: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        if pages != want {
            self.fail(
                "tools/list pages",
                format!("{pages} pages, expected {want}"),
            );
        } else if names != listed {
            self.fail(
                "tools/list pages",
                format!("pages hold {names:?}, the iterator gave {listed:?}"),
            );
        } else {
            self.ok(
                "tools/list pages",
                Some(format!("{} tools in {pages} pages", names.len())),
            );
        }
    }

    fn tools(&mut self, client: &Client, modern: bool, started: Instant) {
        let mut tools = self.list_tools(client, "tools/list").unwrap_or_default();
        self.tool_pages(client, &tools);
        let names = |tools: &[Value]| -> HashSet<String> {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        };
        let late: Vec<String> = self
            .fixture("late_tools")
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|n| !names(&tools).contains(*n))
            .map(str::to_owned)
            .collect();
        if !late.is_empty() {
            self.late_tools(client, modern, started, &late);
            if let Some(t) = self.list_tools(client, "tools/list (after list_changed)") {
                tools = t;
            }
        }
        let mut errs = Vec::new();
        for t in &tools {
            let name = t["name"].as_str().unwrap_or("?");
            if t["description"].as_str().is_none_or(str::is_empty) {
                errs.push(format!("{name}: no description"));
            }
            if t["inputSchema"]["type"] != "object" {
                errs.push(format!("{name}: inputSchema.type is not object"));
            }
        }
        let have = names(&tools);
        let missing: Vec<_> = self
            .required("tools")
            .into_iter()
            .filter(|n| !have.contains(n))
            .collect();
        if !missing.is_empty() {
            errs.push(format!("missing tools: {}", missing.join(", ")));
        }
        if errs.is_empty() {
            self.ok("tools/list shape", Some(format!("{} tools", tools.len())));
        } else {
            self.fail("tools/list shape", errs.join("; "));
        }
        if let Some(schemas) = self.fixture("tool_schemas").as_object() {
            for (name, pattern) in schemas {
                if let Some(t) = tools.iter().find(|t| t["name"] == name.as_str()) {
                    self.check(&format!("tools/list {name} schema"), t, pattern);
                }
            }
        }
        for t in &tools {
            self.call_tool(client, t);
        }
    }

    /// Tools the server adds after the start: announced by `notifications/tools/list_changed`
    /// (legacy), or present in a fresh list once a `subscriptions/listen` stream is open
    /// (2026-07-28, where list changes only travel on such a stream).
    fn late_tools(&mut self, client: &Client, modern: bool, started: Instant, late: &[String]) {
        let deadline = started + LATE_TOOLS_WITHIN;
        let note = Some(late.join(", "));
        if !modern {
            let Some(rx) = &self.tools_changed else {
                return self.fail("tools/list_changed", "not watching for it");
            };
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(()) => self.ok("tools/list_changed", note),
                Err(_) => self.fail("tools/list_changed", "no notification within 8 s"),
            }
            return;
        }
        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        };
        let Some(mut sub) = self.step("subscriptions/listen", client.listen(filter)) else {
            return;
        };
        if sub.acknowledged().tools_list_changed != Some(true) {
            return self.fail(
                "subscriptions/listen",
                "server did not honor toolsListChanged",
            );
        }
        let present = |tools: &[Value]| {
            late.iter()
                .all(|n| tools.iter().any(|t| t["name"] == n.as_str()))
        };
        if self
            .list_tools(client, "tools/list (listening)")
            .is_some_and(|t| present(&t))
        {
            return self.ok(
                "tools/list_changed",
                Some(format!("{} present once listening", late.join(", "))),
            );
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match sub.next_timeout(left) {
                Ok(Some(n)) if n.method == "notifications/tools/list_changed" => {
                    return self.ok("tools/list_changed", note);
                }
                Ok(Some(_)) => {}
                Ok(None) => return self.fail("tools/list_changed", "no notification within 8 s"),
                Err(e) => return self.fail("tools/list_changed", e),
            }
        }
    }

    fn call_tool(&mut self, client: &Client, t: &Value) {
        let name = t["name"].as_str().unwrap_or_default().to_owned();
        if let Some(why) = self.fx["skip_tools"][&name].as_str() {
            println!("  skip tools/call {name}: {why}");
            return;
        }
        let f = self.fx["tools"][&name].clone();
        let args = match f.get("args") {
            Some(a) => a.clone(),
            None => synthesize_args(t.get("inputSchema")),
        };
        let progress: Arc<Mutex<Vec<Value>>> = Arc::default();
        let sink = Arc::clone(&progress);
        let options = CallOptions::new().on_progress(move |p| {
            let mut v = sink.lock().unwrap_or_else(|e| e.into_inner());
            v.push(json!([p.progress, p.total]));
        });
        let before = {
            let mut r = lock(&self.rec);
            r.current_tool = Some(name.clone());
            (r.sampling.len(), r.elicitation.len(), r.logs.len(), r.roots)
        };
        let what = format!("tools/call {name}");
        let res = client.call_tool_with(&name, args, &options);
        lock(&self.rec).current_tool = None;
        let Some(res) = self.step(&what, res) else {
            return;
        };
        let res = to_json(&res);
        if let Some(want) = f.get("logs").and_then(Value::as_array).map(Vec::len) {
            self.wait_for_logs(before.2 + want);
        }
        if let Some(pattern) = f.get("result") {
            self.check(&what, &res, pattern);
        } else if let Some(content) = res["content"].as_array() {
            let note = if res["isError"] == true {
                "isError".to_owned()
            } else {
                format!("{} content item(s)", content.len())
            };
            self.ok(&what, Some(note));
        } else {
            self.fail(&what, "no content array");
        }
        let (sampling, elicitation, logs, roots) = {
            let r = lock(&self.rec);
            (
                r.sampling[before.0..].to_vec(),
                r.elicitation[before.1..].to_vec(),
                r.logs[before.2..].to_vec(),
                r.roots,
            )
        };
        for (kind, method, got) in [
            ("sampling", "sampling/createMessage", sampling),
            ("elicitation", "elicitation/create", elicitation),
        ] {
            if let Some(pattern) = f.get(kind) {
                let what = format!("{name} {method}");
                if got.len() == 1 {
                    self.check(&what, &got[0], pattern);
                } else {
                    self.fail(&what, format!("expected 1 request, got {}", got.len()));
                }
            }
        }
        if f["roots"] == true {
            if roots > before.3 {
                self.ok(
                    &format!("{name} roots/list"),
                    Some(format!("asked {}x", roots - before.3)),
                );
            } else if roots == 0 {
                self.fail(
                    &format!("{name} roots/list"),
                    "the server never asked for roots",
                );
            }
        }
        if let Some(pattern) = f.get("logs") {
            let logs: Vec<Value> = logs
                .into_iter()
                .map(|mut l| {
                    if let Some(o) = l.as_object_mut() {
                        o.remove("_meta");
                    }
                    l
                })
                .collect();
            self.check(
                &format!("{name} notifications/message"),
                &Value::Array(logs),
                pattern,
            );
        }
        if let Some(pattern) = f.get("progress") {
            let got = progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
            self.check(
                &format!("{name} notifications/progress"),
                &Value::Array(got),
                pattern,
            );
        }
    }

    fn resources(&mut self, client: &Client, modern: bool) {
        let listed: Result<Vec<_>, _> = client.list_resources().collect();
        let resources: Vec<Value> = self
            .step("resources/list", listed)
            .map(|r| r.iter().map(to_json).collect())
            .unwrap_or_default();
        let mut errs: Vec<String> = resources
            .iter()
            .filter(|r| r["uri"].as_str().is_none() || r["name"].as_str().is_none())
            .map(|r| format!("{}: missing uri or name", r["uri"]))
            .collect();
        let missing: Vec<_> = self
            .required("resources")
            .into_iter()
            .filter(|u| !resources.iter().any(|r| r["uri"] == u.as_str()))
            .collect();
        if !missing.is_empty() {
            errs.push(format!("missing resources: {}", missing.join(", ")));
        }
        if errs.is_empty() {
            self.ok(
                "resources/list shape",
                Some(format!("{} resources", resources.len())),
            );
        } else {
            self.fail("resources/list shape", errs.join("; "));
        }

        let listed: Result<Vec<_>, _> = client.list_resource_templates().collect();
        let templates: Vec<Value> = self
            .step("resources/templates/list", listed)
            .map(|r| r.iter().map(to_json).collect())
            .unwrap_or_default();
        let missing: Vec<_> = self
            .required("resourceTemplates")
            .into_iter()
            .filter(|u| !templates.iter().any(|t| t["uriTemplate"] == u.as_str()))
            .collect();
        if missing.is_empty() {
            self.ok(
                "resources/templates/list shape",
                Some(format!("{} templates", templates.len())),
            );
        } else {
            self.fail(
                "resources/templates/list shape",
                format!("missing templates: {}", missing.join(", ")),
            );
        }

        let extra = self.fixture("extra_reads");
        let uris: Vec<String> = resources
            .iter()
            .chain(extra.as_array().into_iter().flatten())
            .filter_map(|r| r.get("uri").unwrap_or(r).as_str().map(str::to_owned))
            .collect();
        for uri in uris {
            let what = format!("resources/read {uri}");
            let Some(res) = self.step(&what, client.read_resource(&uri)) else {
                continue;
            };
            let res = to_json(&res);
            match self.fx["resources"].get(&uri) {
                Some(pattern) => {
                    let pattern = pattern.clone();
                    self.check(&what, &res, &pattern);
                }
                None if res["contents"].as_array().is_some_and(|c| !c.is_empty()) => {
                    self.ok(&what, None)
                }
                None => self.fail(&what, "no contents"),
            }
        }

        let subscribe = self.fixture("subscribe");
        for uri in subscribe
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !modern && client.server_capabilities()["resources"]["subscribe"] != true {
                println!(
                    "  skip resources/subscribe {uri}: the server does not declare resources.subscribe"
                );
                continue;
            }
            if !modern {
                if let Some(()) =
                    self.step(&format!("resources/subscribe {uri}"), client.subscribe(uri))
                {
                    self.ok(&format!("resources/subscribe {uri}"), None);
                }
                if let Some(()) = self.step(
                    &format!("resources/unsubscribe {uri}"),
                    client.unsubscribe(uri),
                ) {
                    self.ok(&format!("resources/unsubscribe {uri}"), None);
                }
                continue;
            }
            let filter = SubscriptionFilter {
                resource_subscriptions: Some(vec![uri.to_owned()]),
                ..Default::default()
            };
            let what = format!("subscriptions/listen {uri}");
            if let Some(sub) = self.step(&what, client.listen(filter)) {
                let acked = to_json(sub.acknowledged());
                self.check(
                    &format!("{what} acknowledged"),
                    &acked,
                    &json!({"resourceSubscriptions": [uri]}),
                );
                sub.close();
            }
        }
    }

    fn prompts(&mut self, client: &Client) {
        let listed: Result<Vec<_>, _> = client.list_prompts().collect();
        let prompts: Vec<Value> = self
            .step("prompts/list", listed)
            .map(|r| r.iter().map(to_json).collect())
            .unwrap_or_default();
        let mut errs: Vec<String> = prompts
            .iter()
            .filter(|p| p["description"].as_str().is_none_or(str::is_empty))
            .map(|p| format!("{}: missing name or description", p["name"]))
            .collect();
        let missing: Vec<_> = self
            .required("prompts")
            .into_iter()
            .filter(|n| !prompts.iter().any(|p| p["name"] == n.as_str()))
            .collect();
        if !missing.is_empty() {
            errs.push(format!("missing prompts: {}", missing.join(", ")));
        }
        if errs.is_empty() {
            self.ok(
                "prompts/list shape",
                Some(format!("{} prompts", prompts.len())),
            );
        } else {
            self.fail("prompts/list shape", errs.join("; "));
        }
        for p in &prompts {
            let name = p["name"].as_str().unwrap_or_default();
            let f = self.fx["prompts"][name].clone();
            let args: Vec<(String, String)> = match f.get("args").and_then(Value::as_object) {
                Some(a) => a
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                        )
                    })
                    .collect(),
                None => p["arguments"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|a| a["required"] == true)
                    .filter_map(|a| a["name"].as_str())
                    .map(|n| (n.to_owned(), "test".to_owned()))
                    .collect(),
            };
            let what = format!("prompts/get {name}");
            let Some(res) = self.step(&what, client.get_prompt(name, args)) else {
                continue;
            };
            let res = to_json(&res);
            match f.get("result") {
                Some(pattern) => {
                    self.check(&what, &res, pattern);
                }
                None if res["messages"].as_array().is_some_and(|m| !m.is_empty()) => {
                    self.ok(&what, None)
                }
                None => self.fail(&what, "no messages"),
            }
        }
    }

    /// Fixture `updates`: subscribed to (legacy) or listening for (2026-07-28) `uri`, a call
    /// of `tool` must bring `notifications/resources/updated` about it within 5 s.
    fn updates(&mut self, client: &Client, modern: bool) {
        let updates = self.fixture("updates");
        for u in updates.as_array().into_iter().flatten() {
            let uri = u["uri"].as_str().unwrap_or_default();
            let tool = u["tool"].as_str().unwrap_or_default();
            let what = format!("notifications/resources/updated {uri}");
            let deadline = Instant::now() + UPDATE_WITHIN;
            if modern {
                let filter = SubscriptionFilter {
                    resource_subscriptions: Some(vec![uri.to_owned()]),
                    ..Default::default()
                };
                let Some(mut sub) = self.step(
                    &format!("subscriptions/listen {uri}"),
                    client.listen(filter),
                ) else {
                    continue;
                };
                if self
                    .step(
                        &format!("tools/call {tool}"),
                        client.call_tool(tool, u["args"].clone()),
                    )
                    .is_none()
                {
                    continue;
                }
                loop {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match sub.next_timeout(left) {
                        Ok(Some(n)) if n.method == "notifications/resources/updated" => {
                            let params: Value = n
                                .params
                                .as_deref()
                                .and_then(|p| serde_json::from_str(p.get()).ok())
                                .unwrap_or(Value::Null);
                            if params["uri"] == uri {
                                self.ok(&what, Some("on the listen stream".into()));
                                break;
                            }
                        }
                        Ok(Some(_)) => {}
                        Ok(None) => {
                            self.fail(&what, "none within 5 s");
                            break;
                        }
                        Err(e) => {
                            self.fail(&what, e);
                            break;
                        }
                    }
                }
                sub.close();
                continue;
            }
            if client.server_capabilities()["resources"]["subscribe"] != true {
                println!("  skip {what}: the server does not declare resources.subscribe");
                continue;
            }
            if self
                .step(&format!("resources/subscribe {uri}"), client.subscribe(uri))
                .is_none()
                || self
                    .step(
                        &format!("tools/call {tool}"),
                        client.call_tool(tool, u["args"].clone()),
                    )
                    .is_none()
            {
                continue;
            }
            let Some(rx) = &self.updated else {
                return self.fail(&what, "not watching for it");
            };
            let got = loop {
                match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(u) if u == uri => break true,
                    Ok(_) => {}
                    Err(_) => break false,
                }
            };
            if got {
                self.ok(&what, None);
            } else {
                self.fail(&what, "none within 5 s");
            }
            let _ = client.unsubscribe(uri);
        }
    }

    /// Fixture `cancel`: a call of `tool` cancelled once `after_progress` progress reports
    /// came must end at once with [`Error::Cancelled`], and the connection must go on working.
    fn cancels(&mut self, client: &Client) {
        let cancels = self.fixture("cancel");
        for c in cancels.as_array().into_iter().flatten() {
            let tool = c["tool"].as_str().unwrap_or_default();
            let after = c["after_progress"].as_f64().unwrap_or(1.0);
            let what = format!("cancel tools/call {tool}");
            let handle = CancelHandle::new();
            let h = handle.clone();
            let options = CallOptions::new()
                .cancel_handle(handle)
                .on_progress(move |p| {
                    if p.progress >= after {
                        h.cancel_with_reason("the interop tour cancels it");
                    }
                });
            let started = Instant::now();
            match client.call_tool_with(tool, c["args"].clone(), &options) {
                Err(Error::Cancelled) => {
                    let ms = started.elapsed().as_millis();
                    self.ok(&what, Some(format!("cancelled after {ms} ms")));
                }
                Ok(r) => self.fail(&what, format!("the call completed: {}", to_json(&r))),
                Err(e) => self.fail(&what, e),
            }
            let Some(check) = c.get("then") else {
                continue;
            };
            let (name, args) = (
                check["tool"].as_str().unwrap_or_default(),
                check["args"].clone(),
            );
            let what = format!("tools/call {name} after the cancel");
            if let Some(r) = self.step(&what, client.call_tool(name, args)) {
                let pattern = check
                    .get("result")
                    .cloned()
                    .unwrap_or(json!({"content": "<any>"}));
                self.check(&what, &to_json(&r), &pattern);
            }
        }
    }

    fn completions(&mut self, client: &Client) {
        let completions = self.fixture("completions");
        for c in completions.as_array().into_iter().flatten() {
            let r = &c["ref"];
            let arg = c["argument"]["name"].as_str().unwrap_or_default();
            let value = c["argument"]["value"].as_str().unwrap_or_default();
            let (target, res) = if r["type"] == "ref/prompt" {
                let name = r["name"].as_str().unwrap_or_default();
                (name, client.complete_prompt_argument(name, arg, value))
            } else {
                let uri = r["uri"].as_str().unwrap_or_default();
                (uri, client.complete_resource_argument(uri, arg, value))
            };
            let what = format!("completion/complete {target} {arg}");
            let Some(res) = self.step(&what, res) else {
                continue;
            };
            let res = to_json(&res);
            let pattern = c
                .get("result")
                .cloned()
                .unwrap_or_else(|| json!({"completion": {"values": "<any>"}}));
            if res["completion"]["values"].is_array() {
                self.check(&what, &res, &pattern);
            } else {
                self.fail(&what, "completion.values is not an array");
            }
        }
    }
}

enum Target {
    Command(Vec<String>),
    Url(String),
}

struct Args {
    fixtures: String,
    label: String,
    revision: Revision,
    expect: Option<ProtocolVersion>,
    target: Target,
}

fn parse(argv: Vec<String>) -> Result<Args, String> {
    let mut it = argv.into_iter();
    let fixtures = it.next().ok_or("no fixture file")?;
    let label = it.next().ok_or("no label")?;
    let mut revision = Revision::Auto;
    let mut expect = None;
    let rev = |v: Option<String>| -> Result<ProtocolVersion, String> {
        let v = v.ok_or("a revision is missing")?;
        ProtocolVersion::parse(&v).ok_or_else(|| format!("unknown protocol revision {v:?}"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--auto" => revision = Revision::Auto,
            "--legacy" => revision = Revision::Legacy,
            "--modern" => revision = Revision::Modern,
            "--revision" => revision = Revision::Exact(rev(it.next())?),
            "--expect" => expect = Some(rev(it.next())?),
            "--http" => {
                let url = it.next().ok_or("--http needs a URL")?;
                if it.next().is_some() {
                    return Err("nothing may follow the URL".into());
                }
                return Ok(Args {
                    fixtures,
                    label,
                    revision,
                    expect,
                    target: Target::Url(url),
                });
            }
            "--" => {
                let cmd: Vec<String> = it.collect();
                if cmd.is_empty() {
                    return Err("nothing after `--`".into());
                }
                return Ok(Args {
                    fixtures,
                    label,
                    revision,
                    expect,
                    target: Target::Command(cmd),
                });
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Err("no server given".into())
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1).collect()) {
        Ok(a) => a,
        Err(why) => {
            eprintln!("tour: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .target(env_logger::Target::Stderr)
        .init();
    let fx: Value = match std::fs::read_to_string(&args.fixtures)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("tour: {}: {e}", args.fixtures);
            return ExitCode::from(2);
        }
    };
    let fx = Arc::new(fx);
    let rec: Shared = Arc::default();
    let (changed_tx, changed_rx) = sync_channel(1);
    let (updated_tx, updated_rx) = sync_channel(64);
    let (logged_tx, logged_rx) = sync_channel(64);
    let builder = builder(&fx, &rec, args.revision).on_notification({
        let rec = rec.clone();
        move |n| match n.method.as_str() {
            "notifications/tools/list_changed" => {
                let _ = changed_tx.try_send(());
            }
            "notifications/resources/updated" => {
                let params: Value = n
                    .params
                    .as_deref()
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or(Value::Null);
                if let Some(uri) = params["uri"].as_str() {
                    let _ = updated_tx.try_send(uri.to_owned());
                }
            }
            "notifications/message" => {
                let params = n
                    .params
                    .as_deref()
                    .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                    .unwrap_or(Value::Null);
                lock(&rec).logs.push(params);
                let _ = logged_tx.try_send(());
            }
            _ => {}
        }
    });
    let (transport, shown) = match &args.target {
        Target::Command(c) => ("stdio", c.join(" ")),
        Target::Url(u) => ("http", u.clone()),
    };
    println!("tour {} ({transport}): {shown}", args.label);
    let started = Instant::now();
    let connected = match &args.target {
        Target::Url(url) => builder.connect_http(url),
        Target::Command(c) => builder.spawn(ChildBuilder::new(&c[0]).args(&c[1..])),
    };
    let mut tour = Tour {
        fx,
        rec: rec.clone(),
        steps: 0,
        failures: 0,
        tools_changed: Some(changed_rx),
        updated: Some(updated_rx),
        logged: Some(logged_rx),
    };
    match connected {
        Ok(client) => {
            let note = format!(
                "{:?} era, protocol {}",
                client.era(),
                client.protocol_version().as_str()
            );
            tour.ok("connect", Some(note));
            tour.run(&client, args.expect, started);
            // How the server ended is worth seeing (a server that ignores the end of its input
            // is stopped with SIGTERM after the close grace), but it is the server's business.
            let closing = Instant::now();
            match client.close() {
                Ok(Some(status)) => {
                    let ms = closing.elapsed().as_millis();
                    tour.ok("close", Some(format!("server {status} after {ms} ms")));
                }
                Ok(None) => tour.ok("close", None),
                Err(e) => tour.fail("close", e),
            }
        }
        Err(e) => tour.fail("connect", e),
    }
    let r = lock(&rec);
    println!(
        "tour {}: {}, {}/{} steps ok (server asked for roots {}x, sampling {}x, elicitation {}x) in {:.1} s",
        args.label,
        if tour.failures == 0 { "PASS" } else { "FAIL" },
        tour.steps - tour.failures,
        tour.steps,
        r.roots,
        r.sampling.len(),
        r.elicitation.len(),
        started.elapsed().as_secs_f64()
    );
    if tour.failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
