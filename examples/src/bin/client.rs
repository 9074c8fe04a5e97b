//! A command-line MCP client: lists and calls what a server offers and prints the JSON answers.
//!
//! ```text
//! client [OPTIONS] ACTION [ARGS...] -- COMMAND [ARGS...]   (start COMMAND, talk over stdio)
//! client [OPTIONS] URL ACTION [ARGS...]                    (Streamable HTTP, e.g.
//!                                                            http://127.0.0.1:8080/mcp)
//! client [OPTIONS] ACTION [ARGS...] URL                    (the same, URL last)
//!
//! ACTION: tools | call NAME ['JSON'] | resources | templates | read URI | prompts
//!         | prompt NAME ['JSON'] | skills | skill get URI | skill read URI [FILE-URI]
//!         | info | conformance
//!         | task get ID | task cancel ID | task wait ID | task call NAME ['JSON']
//! OPTIONS: --legacy | --modern | --revision YYYY-MM-DD   (default: try modern, fall back)
//!          --timeout SECONDS   -v (verbose)
//!          --bearer TOKEN      (HTTP: a fixed bearer token)
//!          --oauth             (HTTP: sign in with OAuth 2.1 when the server asks; the
//!                               authorization URL is printed and opened in a browser, which
//!                               comes back to a listener on 127.0.0.1)
//!          --auth-file PATH    (with --oauth: keep the sign-in in PATH between runs)
//! ```
//!
//! `call` follows a tool that the server runs as a task (the tasks extension of 2026-07-28)
//! to its result. `task get|cancel|wait ID` reach a task by its id, typically one started by
//! another process: its state (`tasks/get`), its cancellation (`tasks/cancel`), or its result
//! once it ends. `task call` asks for a task where the client chooses (the experimental tasks of
//! 2025-11-25, on a server that offers them) and follows it; elsewhere it is `call`.
//!
//! The answer goes to stdout as pretty JSON; errors go to stderr and the exit status is
//! non-zero (also when a tool reports `isError`). With `-v`, the server's own stderr and the
//! client's debug log are shown on stderr too.
//!
//! `conformance` is what the official conformance suite runs in client mode
//! (`client conformance URL`, with the scenario's name in `MCP_CONFORMANCE_SCENARIO`): connect,
//! list the tools and call each one with arguments made from its input schema, accepting any
//! elicitation with the defaults its form declares. Scenarios that say what to call do it
//! their way: the calls in the context's `toolCalls`, the schema echo of
//! `json-schema-2020-12-preservation`, or only the listing (`json-schema-ref-no-deref`).
//! The skills scenarios (`sep-2640-client-*`) list the skills; all but `no-prefetch` then
//! load the first one (its SKILL.md, verified against the entry) and, only if that passed,
//! read its other files one at a time, each verified.
//!
//! `skills` prints the server's skill entries (no file is fetched); `skill get URI` prints one
//! entry (URI of its SKILL.md); `skill read URI [FILE-URI]` prints the skill's SKILL.md (or
//! one of its files) after checking its size, SHA-256 digest and frontmatter against the
//! entry, and fails without printing anything when they differ.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mcp_client::oauth::{AuthStore, LoopbackRedirect, OAuthConfig, OAuthProvider, SavedAuth};
use mcp_client::{
    AuthProvider, BearerToken, CallOptions, Client, Error, HttpClientConfig, Revision, SkillError,
    Started, TaskHandle, Timeout,
};
use mcp_core::jsonrpc::ErrorObject;
use mcp_core::types::{ElicitAction, ElicitRequestParams, ElicitResult};
use mcp_core::version::ProtocolVersion;
use mcp_stdio::ChildBuilder;
use serde::Serialize;
use serde_json::{Map, Value};

const USAGE: &str =
    "usage: client [--legacy|--modern|--revision REV] [--timeout SECS] [--no-tasks] [-v] \
[--bearer TOKEN | --oauth [--auth-file PATH]] ACTION [ARGS...] -- COMMAND [ARGS...]
       client [OPTIONS] URL ACTION [ARGS...]
       client [OPTIONS] ACTION [ARGS...] URL
actions: tools | call NAME ['JSON'] | resources | templates | read URI | prompts | \
prompt NAME ['JSON'] | skills | skill get URI | skill read URI [FILE-URI] | info | conformance | \
task get ID | task cancel ID | task wait ID | task call NAME ['JSON']";

enum Target {
    Command(Vec<String>),
    Url(String),
}

/// How the HTTP client authorizes.
#[derive(Debug, PartialEq)]
enum Authorize {
    None,
    Bearer(String),
    OAuth { file: Option<PathBuf> },
}

struct Args {
    verbose: bool,
    /// `--no-tasks`: do not declare the tasks extension (calls are never made tasks).
    no_tasks: bool,
    revision: Revision,
    timeout: Option<Duration>,
    auth: Authorize,
    action: Vec<String>,
    target: Target,
}

fn parse(mut argv: Vec<String>) -> Result<Args, String> {
    let mut revision = Revision::Auto;
    let mut timeout = None;
    let mut verbose = false;
    let mut no_tasks = false;
    let mut auth = Authorize::None;
    let mut auth_file = None;
    let command = match argv.iter().position(|a| a == "--") {
        Some(i) => {
            let cmd = argv.split_off(i + 1);
            argv.pop();
            if cmd.is_empty() {
                return Err("nothing after `--`: give the server command to run".into());
            }
            Some(cmd)
        }
        None => None,
    };
    let mut rest = Vec::new();
    let mut it = argv.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--legacy" => revision = Revision::Legacy,
            "--modern" => revision = Revision::Modern,
            "--revision" => {
                let v = it.next().ok_or("--revision needs a value")?;
                let rev = ProtocolVersion::parse(&v)
                    .ok_or_else(|| format!("unknown protocol revision {v:?}"))?;
                revision = Revision::Exact(rev);
            }
            "--timeout" => {
                let v = it.next().ok_or("--timeout needs a value")?;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| format!("bad --timeout {v:?}"))?;
                timeout = Some(Duration::from_secs_f64(secs));
            }
            "-v" | "--verbose" => verbose = true,
            "--no-tasks" => no_tasks = true,
            "--bearer" => auth = Authorize::Bearer(it.next().ok_or("--bearer needs a token")?),
            "--oauth" => auth = Authorize::OAuth { file: None },
            "--auth-file" => {
                auth_file = Some(PathBuf::from(it.next().ok_or("--auth-file needs a path")?));
            }
            "-h" | "--help" => return Err(String::new()),
            _ => rest.push(a),
        }
    }
    let target = match command {
        Some(cmd) => Target::Command(cmd),
        None => {
            if rest.is_empty() {
                return Err("no server given".into());
            }
            let is_url = |a: &String| a.starts_with("http://") || a.starts_with("https://");
            // The URL comes first, or last (as the conformance suite appends it).
            let at = if is_url(&rest[0]) { 0 } else { rest.len() - 1 };
            if !is_url(&rest[at]) {
                return Err(format!(
                    "{:?} is not a URL; to start a server, put its command after `--`",
                    rest[0]
                ));
            }
            Target::Url(rest.remove(at))
        }
    };
    if rest.is_empty() {
        return Err("no action given".into());
    }
    match (&mut auth, auth_file) {
        (Authorize::OAuth { file }, path) => *file = path,
        (_, Some(_)) => return Err("--auth-file goes with --oauth".into()),
        _ => {}
    }
    if auth != Authorize::None && matches!(target, Target::Command(_)) {
        return Err("--bearer and --oauth are for HTTP servers".into());
    }
    Ok(Args {
        verbose,
        no_tasks,
        revision,
        timeout,
        auth,
        action: rest,
        target,
    })
}

fn json_arg(arg: Option<&String>) -> Result<Value, String> {
    match arg {
        None => Ok(Value::Null),
        Some(text) => {
            let v: Value =
                serde_json::from_str(text).map_err(|e| format!("bad JSON argument: {e}"))?;
            if v.is_object() || v.is_null() {
                Ok(v)
            } else {
                Err("the JSON argument must be an object".into())
            }
        }
    }
}

fn print<T: Serialize>(v: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    println!("{text}");
    Ok(())
}

fn err(e: Error) -> String {
    e.to_string()
}

fn skill_err(e: SkillError) -> String {
    e.to_string()
}

fn run(client: &Client, action: &[String]) -> Result<(), String> {
    let arity = |n: std::ops::RangeInclusive<usize>| {
        if n.contains(&(action.len() - 1)) {
            Ok(())
        } else {
            Err(format!(
                "wrong number of arguments for {:?}\n{USAGE}",
                action[0]
            ))
        }
    };
    match action[0].as_str() {
        "tools" => {
            arity(0..=0)?;
            let tools: Vec<_> = client.list_tools().collect::<Result<_, _>>().map_err(err)?;
            print(&tools)
        }
        "resources" => {
            arity(0..=0)?;
            let items: Vec<_> = client
                .list_resources()
                .collect::<Result<_, _>>()
                .map_err(err)?;
            print(&items)
        }
        "templates" => {
            arity(0..=0)?;
            let items: Vec<_> = client
                .list_resource_templates()
                .collect::<Result<_, _>>()
                .map_err(err)?;
            print(&items)
        }
        "prompts" => {
            arity(0..=0)?;
            let items: Vec<_> = client
                .list_prompts()
                .collect::<Result<_, _>>()
                .map_err(err)?;
            print(&items)
        }
        "call" => {
            arity(1..=2)?;
            let result = client
                .call_tool(&action[1], json_arg(action.get(2))?)
                .map_err(err)?;
            print(&result)?;
            if result.is_error() {
                return Err(format!("tool {:?} reported an error", action[1]));
            }
            Ok(())
        }
        "read" => {
            arity(1..=1)?;
            print(&client.read_resource(&action[1]).map_err(err)?)
        }
        "prompt" => {
            arity(1..=2)?;
            let args = match json_arg(action.get(2))? {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            // Prompt arguments are strings; other JSON values are passed as their JSON text.
            let args = args.into_iter().map(|(k, v)| match v {
                Value::String(s) => (k, s),
                other => (k, other.to_string()),
            });
            print(&client.get_prompt(&action[1], args).map_err(err)?)
        }
        "skills" => {
            arity(0..=0)?;
            print(&client.list_skills().map_err(skill_err)?)
        }
        "skill" => match action.get(1).map(String::as_str) {
            Some("get") => {
                arity(2..=2)?;
                print(&client.get_skill(&action[2]).map_err(skill_err)?)
            }
            Some("read") => {
                arity(2..=3)?;
                let skill = client.get_skill(&action[2]).map_err(skill_err)?;
                let uri = action.get(3).unwrap_or(&skill.uri);
                let file = client.read_skill_file(&skill, uri).map_err(skill_err)?;
                match file.text() {
                    Some(text) => {
                        print!("{text}");
                        Ok(())
                    }
                    None => Err(format!(
                        "{uri}: {} bytes verified, not text (not printed)",
                        file.bytes.len()
                    )),
                }
            }
            _ => Err(format!(
                "skill takes get URI or read URI [FILE-URI]\n{USAGE}"
            )),
        },
        "conformance" => {
            arity(0..=0)?;
            let plan = conformance_plan(
                std::env::var("MCP_CONFORMANCE_SCENARIO").ok().as_deref(),
                std::env::var("MCP_CONFORMANCE_CONTEXT").ok().as_deref(),
            )?;
            run_conformance(client, &plan)
        }
        "task" if action.get(1).is_some_and(|a| a == "call") => {
            arity(2..=3)?;
            let started = client
                .call_tool_as_task(&action[2], json_arg(action.get(3))?, &CallOptions::new())
                .map_err(err)?;
            let result = match started {
                Started::Complete(result) => *result,
                Started::Task(handle) => {
                    eprintln!("client: task {} started", handle.task_id);
                    client
                        .task_wait(&handle, &CallOptions::new())
                        .map_err(err)?
                }
            };
            print(&result)?;
            if result.is_error() {
                return Err(format!("tool {:?} reported an error", action[2]));
            }
            Ok(())
        }
        "task" => {
            arity(2..=2)?;
            let handle = TaskHandle::new(action[2].clone());
            match action[1].as_str() {
                "get" => print(&client.task_get(&handle).map_err(err)?),
                "cancel" => {
                    client.task_cancel(&handle).map_err(err)?;
                    print(&serde_json::json!({"taskId": handle.task_id, "cancelled": true}))
                }
                "wait" => {
                    let result = client
                        .task_wait(&handle, &CallOptions::new())
                        .map_err(err)?;
                    print(&result)?;
                    if result.is_error() {
                        return Err(format!("task {:?} ended in a tool error", action[2]));
                    }
                    Ok(())
                }
                other => Err(format!("unknown task action {other:?}\n{USAGE}")),
            }
        }
        "info" => {
            arity(0..=0)?;
            print(&serde_json::json!({
                "protocolVersion": client.protocol_version().as_str(),
                "serverInfo": client.server_info(),
                "capabilities": client.server_capabilities(),
                "instructions": client.instructions(),
            }))
        }
        other => Err(format!("unknown action {other:?}\n{USAGE}")),
    }
}

/// What the `conformance` action does in one of the suite's scenarios.
#[derive(Debug, PartialEq)]
enum Plan {
    /// List the tools and call each one with arguments made from its input schema.
    EveryTool,
    /// List the tools and stop (`json-schema-ref-no-deref`: the mock answers `tools/list`
    /// alone, so any call would fail the run; what is checked is that the `$ref` in a schema
    /// is never fetched).
    ListOnly,
    /// List the tools, then call `echo` with `{"schema": <the inputSchema of focal>}`, as
    /// received (`json-schema-2020-12-preservation`: the mock compares the echo with its
    /// fixture to see which keywords the client lost).
    EchoSchema {
        /// The tool whose schema is echoed.
        focal: String,
        /// The echo tool.
        echo: String,
    },
    /// List the tools (which is where the `x-mcp-header` marks are learnt), then make exactly
    /// these calls, with exactly these arguments (the context's `toolCalls`, as in
    /// `http-custom-headers`, whose checks depend on the values: a null one, an empty one,
    /// ones that need base64).
    Calls(Vec<(String, Value)>),
    /// The skills extension's host scenarios (`sep-2640-client-*`): list the skills, and with
    /// `load`, load the first (its SKILL.md, verified) and then read its other files, each
    /// verified; a verification failure stops there, as a host must not use the content.
    Skills {
        /// Whether to load a skill after listing.
        load: bool,
    },
}

/// The plan for a scenario, from its name (`MCP_CONFORMANCE_SCENARIO`) and its context
/// (`MCP_CONFORMANCE_CONTEXT`, a JSON object).
fn conformance_plan(scenario: Option<&str>, context: Option<&str>) -> Result<Plan, String> {
    let context: Value = match context {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
        None => Value::Null,
    };
    if let Some(calls) = context.get("toolCalls") {
        let calls = calls
            .as_array()
            .ok_or("MCP_CONFORMANCE_CONTEXT: toolCalls is not an array")?;
        return calls
            .iter()
            .map(|c| {
                let name = c
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("MCP_CONFORMANCE_CONTEXT: a tool call without a name")?;
                let args = c.get("arguments").cloned().unwrap_or(Value::Null);
                if !(args.is_object() || args.is_null()) {
                    return Err(format!("the arguments of tool call {name:?} are no object"));
                }
                Ok((name.to_owned(), args))
            })
            .collect::<Result<_, String>>()
            .map(Plan::Calls);
    }
    Ok(match scenario {
        Some("sep-2640-client-no-prefetch") => Plan::Skills { load: false },
        Some(s) if s.starts_with("sep-2640-client-") => Plan::Skills { load: true },
        Some("json-schema-ref-no-deref") => Plan::ListOnly,
        Some("json-schema-2020-12-preservation") => Plan::EchoSchema {
            focal: "json_schema_2020_12_tool".into(),
            echo: "json_schema_echo".into(),
        },
        _ => Plan::EveryTool,
    })
}

/// Runs `plan`, printing the tools' results as one JSON array (the tool list for
/// [`Plan::ListOnly`]). A server without tools gets no `tools/list` and prints `[]`.
fn run_conformance(client: &Client, plan: &Plan) -> Result<(), String> {
    if let Plan::Skills { load } = plan {
        return skills_conformance(client, *load);
    }
    if client.server_capabilities().get("tools").is_none() {
        return print(&Vec::<Value>::new());
    }
    let tools: Vec<_> = client.list_tools().collect::<Result<_, _>>().map_err(err)?;
    let calls: Vec<(String, Value)> = match plan {
        Plan::ListOnly | Plan::Skills { .. } => return print(&tools),
        Plan::EveryTool => tools
            .iter()
            .map(|t| (t.name.clone(), sample_arguments(&t.input_schema)))
            .collect(),
        Plan::EchoSchema { focal, echo } => {
            let tool = tools
                .iter()
                .find(|t| t.name == *focal)
                .ok_or_else(|| format!("the server lists no tool {focal:?}"))?;
            let schema = Value::Object(tool.input_schema.clone());
            vec![(echo.clone(), serde_json::json!({ "schema": schema }))]
        }
        Plan::Calls(calls) => calls.clone(),
    };
    let mut results = Vec::new();
    for (name, args) in calls {
        let result = client.call_tool(&name, args).map_err(err)?;
        if result.is_error() {
            print(&result)?;
            return Err(format!("tool {name:?} reported an error"));
        }
        results.push(serde_json::json!({"tool": name, "result": result}));
    }
    print(&results)
}

/// [`Plan::Skills`]: prints the entries, and with `load` what was read of the first skill. A
/// file that fails verification is reported (on stderr and in the output) and nothing more of
/// that skill is read: refusing it is the expected outcome, so the run still succeeds.
fn skills_conformance(client: &Client, load: bool) -> Result<(), String> {
    let skills = client.list_skills().map_err(skill_err)?;
    let Some(skill) = skills.first().filter(|_| load) else {
        return print(&skills);
    };
    let mut read = Vec::new();
    let mut uris = vec![skill.uri.clone()];
    if let Some(files) = skill.resources.files() {
        uris.extend(
            files
                .iter()
                .map(|f| f.uri.clone())
                .filter(|u| *u != skill.uri),
        );
    }
    for uri in uris {
        match client.read_skill_file(skill, &uri) {
            Ok(file) => read.push(serde_json::json!({"uri": uri, "bytes": file.bytes.len()})),
            Err(e) if e.is_verification_failure() => {
                eprintln!("client: skill {} refused: {e}", skill.uri);
                read.push(serde_json::json!({"uri": uri, "refused": e.to_string()}));
                break;
            }
            Err(e) => return Err(skill_err(e)),
        }
    }
    print(&serde_json::json!({"skills": skills, "read": read}))
}

/// Arguments that satisfy a plain input schema: each property's `default` when it has one,
/// else a value of its type (numbers count up from 1, so `a + b` is not `0 + 0`).
fn sample_arguments(schema: &Map<String, Value>) -> Value {
    let mut args = Map::new();
    let mut n = 0;
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, prop) in props {
            n += 1;
            let value = match prop.get("default") {
                Some(v) => v.clone(),
                None => sample_value(prop, n),
            };
            args.insert(name.clone(), value);
        }
    }
    Value::Object(args)
}

fn sample_value(prop: &Value, n: i64) -> Value {
    if let Some(Value::Array(options)) = prop.get("enum")
        && let Some(first) = options.first()
    {
        return first.clone();
    }
    match prop.get("type").and_then(Value::as_str) {
        Some("integer" | "number") => Value::from(n),
        Some("boolean") => Value::Bool(true),
        Some("array") => Value::Array(Vec::new()),
        Some("object") => Value::Object(Map::new()),
        Some("null") => Value::Null,
        _ => Value::String(format!("value-{n}")),
    }
}

/// An elicitation answer that accepts the form with the defaults it declares (fields without
/// one are left out), or declines it when a required field has none: this client asks no one,
/// and an answer it made up would not be the user's (the server would refuse an incomplete one).
fn accept_defaults(params: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
    match params {
        ElicitRequestParams::Form(form) => {
            let mut content = Map::new();
            for (name, field) in &form.requested_schema.properties {
                let field = serde_json::to_value(field).map_err(ErrorObject::internal)?;
                if let Some(v) = field.get("default") {
                    content.insert(name.clone(), v.clone());
                }
            }
            let required = form.requested_schema.required.iter().flatten();
            if required.into_iter().any(|name| !content.contains_key(name)) {
                return Ok(ElicitResult::action(ElicitAction::Decline));
            }
            Ok(ElicitResult::accept(content))
        }
        ElicitRequestParams::Url(_) => Ok(ElicitResult::action(ElicitAction::Decline)),
    }
}

/// The HTTP settings for `auth`.
fn http_config(auth: &Authorize) -> Result<HttpClientConfig, String> {
    let provider: Arc<dyn AuthProvider> = match auth {
        Authorize::None => return Ok(HttpClientConfig::default()),
        Authorize::Bearer(t) => Arc::new(BearerToken::new(t.clone())),
        Authorize::OAuth { file } => {
            let redirect = LoopbackRedirect::bind()
                .map_err(|e| format!("cannot listen for the sign-in redirect: {e}"))?;
            let browser = redirect.browser(Duration::from_secs(300), |url| {
                eprintln!("client: sign in at {url}");
                open_browser(url);
                Ok(())
            });
            let mut cfg = OAuthConfig::authorization_code(redirect.redirect_uri(), browser)
                .client_name("mcp-blocking-cli");
            if let Some(path) = file {
                cfg = cfg.store(Arc::new(FileStore(path.clone())));
            }
            Arc::new(OAuthProvider::new(cfg.build()))
        }
    };
    Ok(HttpClientConfig::builder().auth(provider).build())
}

/// Starts the desktop's browser on `url`, if there is one (the URL is printed anyway).
fn open_browser(url: &str) {
    let opener: &[&str] = if cfg!(target_os = "macos") {
        &["open"]
    } else if cfg!(windows) {
        &["cmd", "/C", "start", ""]
    } else {
        &["xdg-open"]
    };
    let started = std::process::Command::new(opener[0])
        .args(&opener[1..])
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        log::debug!("no browser started ({}: {e})", opener[0]);
    }
}

/// The sign-in kept in a JSON file that only its owner can read.
struct FileStore(PathBuf);

impl AuthStore for FileStore {
    fn load(&self) -> Option<SavedAuth> {
        serde_json::from_slice(&std::fs::read(&self.0).ok()?).ok()
    }

    fn save(&self, saved: &SavedAuth) {
        let written = serde_json::to_vec_pretty(saved)
            .map_err(std::io::Error::other)
            .and_then(|json| write_private(&self.0, &json));
        if let Err(e) = written {
            log::warn!("cannot keep the sign-in in {}: {e}", self.0.display());
        }
    }
}

/// Writes `bytes` to `path`, readable by the owner alone where the system has such modes.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    // An older file keeps its mode on open: narrow it too.
    #[cfg(unix)]
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    file.write_all(bytes)
}

/// Log lines to stderr (stdout carries the answer). A few lines instead of env_logger, so this
/// binary builds without the examples' `full` feature.
struct StderrLog(log::LevelFilter);

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= self.0
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("[{} {}] {}", r.level(), r.target(), r.args());
        }
    }
    fn flush(&self) {}
}

fn main() -> ExitCode {
    // The conformance suite's `auth/*` scenarios (URL last, scenario in the environment).
    if let Some(code) = mcp_examples::conformance_auth::main_if_auth_scenario() {
        return code;
    }
    let args = match parse(std::env::args().skip(1).collect()) {
        Ok(a) => a,
        Err(why) => {
            if why.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("client: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let level = if args.verbose {
        log::LevelFilter::Debug
    } else {
        log::LevelFilter::Warn
    };
    if log::set_boxed_logger(Box::new(StderrLog(level))).is_ok() {
        log::set_max_level(level);
    }
    let mut builder = Client::builder()
        .client_info("mcp-blocking-cli", env!("CARGO_PKG_VERSION"))
        .revision(args.revision)
        .tasks(!args.no_tasks);
    if let Some(t) = args.timeout {
        builder = builder.timeout(Timeout::fixed(t)).handshake_timeout(t);
    }
    if args.action[0] == "conformance" {
        builder = builder.elicitation(accept_defaults);
    }
    let connected = match &args.target {
        Target::Url(url) => match http_config(&args.auth) {
            Ok(cfg) => builder.connect_http_with(url, cfg),
            Err(e) => {
                eprintln!("client: {e}");
                return ExitCode::FAILURE;
            }
        },
        Target::Command(command) => {
            builder.spawn(ChildBuilder::new(&command[0]).args(&command[1..]))
        }
    };
    let client = match connected {
        Ok(c) => c,
        Err(e) => {
            eprintln!("client: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = run(&client, &args.action);
    let closed = client.close();
    if let Err(why) = outcome {
        eprintln!("client: {why}");
        return ExitCode::FAILURE;
    }
    if let Err(e) = closed {
        eprintln!("client: closing the server: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(a: &[&str]) -> Result<Args, String> {
        parse(a.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn auth_options_are_for_http_servers() {
        let a = args(&[
            "--oauth",
            "--auth-file",
            "/tmp/x.json",
            "tools",
            "http://h/mcp",
        ])
        .unwrap();
        assert_eq!(
            a.auth,
            Authorize::OAuth {
                file: Some(PathBuf::from("/tmp/x.json"))
            }
        );
        let a = args(&["--bearer", "t0k", "http://h/mcp", "tools"]).unwrap();
        assert_eq!(a.auth, Authorize::Bearer("t0k".into()));
        assert!(args(&["--auth-file", "x", "tools", "http://h/mcp"]).is_err());
        assert!(args(&["--bearer", "t", "tools", "--", "server"]).is_err());
    }

    #[test]
    fn the_auth_file_is_private_and_read_back() {
        let dir = std::env::temp_dir().join(format!("mcp-client-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("auth.json");
        let store = FileStore(path.clone());
        assert!(store.load().is_none());
        let saved = SavedAuth {
            resource: "http://h/mcp".into(),
            token_endpoint: "http://as/token".into(),
            client_id: "c".into(),
            client_secret: None,
            auth_method: "none".into(),
            access_token: "a".into(),
            refresh_token: Some("r".into()),
            scopes: vec![],
            expires_at: Some(1),
        };
        store.save(&saved);
        assert_eq!(store.load(), Some(saved));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sample_arguments_follow_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"}, "b": {"type": "integer"}, "name": {"type": "string"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "limit": {"type": "integer", "default": 7}, "flag": {"type": "boolean"}}});
        let args = sample_arguments(schema.as_object().unwrap());
        assert_eq!(
            args,
            json!({"a": 1, "b": 2, "flag": true, "limit": 7, "mode": "fast", "name": "value-6"})
        );
    }

    #[test]
    fn the_scenario_and_its_context_choose_the_plan() {
        let ctx = r#"{"name":"http-custom-headers","toolCalls":[
            {"name":"a","arguments":{"x":null}},{"name":"b"}]}"#;
        assert_eq!(
            conformance_plan(Some("http-custom-headers"), Some(ctx)).unwrap(),
            Plan::Calls(vec![
                ("a".into(), json!({"x": null})),
                ("b".into(), Value::Null)
            ])
        );
        assert_eq!(
            conformance_plan(Some("json-schema-ref-no-deref"), None).unwrap(),
            Plan::ListOnly
        );
        assert!(matches!(
            conformance_plan(Some("json-schema-2020-12-preservation"), Some("{}")).unwrap(),
            Plan::EchoSchema { .. }
        ));
        assert_eq!(
            conformance_plan(Some("tools_call"), None).unwrap(),
            Plan::EveryTool
        );
        assert_eq!(
            conformance_plan(Some("sep-2640-client-no-prefetch"), None).unwrap(),
            Plan::Skills { load: false }
        );
        assert_eq!(
            conformance_plan(Some("sep-2640-client-verify-digest"), None).unwrap(),
            Plan::Skills { load: true }
        );
        assert!(conformance_plan(None, Some("not json")).is_err());
        assert!(conformance_plan(None, Some(r#"{"toolCalls":{}}"#)).is_err());
        assert!(conformance_plan(None, Some(r#"{"toolCalls":[{"arguments":{}}]}"#)).is_err());
        assert!(
            conformance_plan(None, Some(r#"{"toolCalls":[{"name":"a","arguments":1}]}"#)).is_err()
        );
    }

    #[test]
    fn elicitation_is_accepted_with_the_declared_defaults() {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "m", "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "verified": {"type": "boolean", "default": true},
                "free": {"type": "string"}}}}))
        .unwrap();
        let answer = accept_defaults(params).unwrap();
        assert_eq!(answer.action, ElicitAction::Accept);
        assert_eq!(
            Value::Object(answer.content.unwrap()),
            json!({"name": "John Doe", "age": 30, "verified": true})
        );
    }
}
