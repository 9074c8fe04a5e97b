//! The server: a builder that registers what the server offers, and the handle that changes it
//! at run time and serves sessions for any transport.

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use mcp_core::engine::{ListKind as ChangedList, ServerConfig};
use mcp_core::executor::Executor;
use mcp_core::service::{Outbound, Service, Session, SessionInfo};
use mcp_core::types::skills as skills_ext;
use mcp_core::types::tasks_ext;
use mcp_core::types::{Icon, Implementation};
use mcp_core::version::VersionSet;
use serde_json::{Value, json};

use crate::broadcast::{Broadcast, Event, LISTENER_CAPACITY};
use crate::error::{Error, StartError};
use crate::prompt::Prompt;
use crate::rate::{Limiter, RateLimited, RateLimits};
use crate::resource::{Resource, ResourceTemplate};
use crate::session::KitSession;
use crate::shared::{Config, Registry, Shared};
use crate::skills::Skills;
#[cfg(feature = "tasks")]
use crate::tasks::TaskStore;
use crate::tasks::{Settings as TaskSettings, Tasks};
use crate::tool::Tool;

/// How long a handler thread beyond `workers` waits for work before it ends.
const IDLE_WORKER_TIMEOUT: Duration = Duration::from_secs(10);
/// The open sessions, for what goes to all of them (list changes, resource updates).
#[derive(Default)]
struct Sessions {
    list: Vec<Weak<KitSession>>,
    /// The list's length after the last sweep of ended sessions.
    swept: usize,
}

impl Sessions {
    /// The sessions still open, after sweeping out the ended ones.
    fn live(&mut self) -> Vec<Arc<KitSession>> {
        self.sweep();
        self.list.iter().filter_map(Weak::upgrade).collect()
    }

    /// Ended sessions are swept out when the list has doubled since the last sweep, so an
    /// open costs O(1) amortized however many sessions there are (a 2026-07-28 server opens
    /// one per request), and the list stays within twice the open sessions (plus a few).
    fn add(&mut self, s: Weak<KitSession>) {
        if self.list.len() >= 2 * self.swept.max(16) {
            self.sweep();
        }
        self.list.push(s);
    }

    fn sweep(&mut self) {
        self.list.retain(|w| w.strong_count() > 0);
        self.swept = self.list.len();
    }
}

/// Builds a [`Server`].
///
/// ```
/// use mcp_server_kit::{Context, Error, Server, Tool, schema::Schema};
///
/// #[derive(serde::Deserialize)]
/// struct Echo { message: String }
///
/// let server = Server::builder("echo", "1.0.0")
///     .tool(
///         Tool::new("echo", |a: Echo, _ctx: &Context| Ok::<_, Error>(a.message))
///             .description("Echoes the message")
///             .input_schema(Schema::object().property("message", Schema::string())),
///     )
///     .build()
///     .unwrap();
/// assert_eq!(server.tool_names(), vec!["echo".to_string()]);
/// ```
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    registry: Registry,
    logging: bool,
    completions: bool,
    versions: VersionSet,
    config: Config,
    /// The tasks extension's settings (nothing without the `tasks` feature).
    tasks: TaskSettings,
    broadcast: Option<Arc<dyn Broadcast>>,
    rate_limits: RateLimits,
    stdio_rate_limits: RateLimits,
    skills: Option<Skills>,
}

impl ServerBuilder {
    /// Serves a catalog of skills (the skills extension, SEP-2640): `skills/list`,
    /// `skills/get`, `resources/directory/read`, each skill's files through `resources/read`
    /// and its `SKILL.md` in `resources/list`. The extension is declared under
    /// `capabilities.extensions` (with `directoryRead`), with the `resources` capability it
    /// depends on; [`Skills::rescan`] tells this server's clients when the catalog changed.
    /// Feature `skills`.
    #[cfg(feature = "skills")]
    pub fn skills(mut self, skills: Skills) -> Self {
        self.skills = Some(skills);
        self
    }

    /// Keeps `value` for the handlers, which read it with
    /// [`Context::state`](crate::Context::state): one value per type (a later one of the same
    /// type replaces it), shared by every session and every handler thread, hence `Send +
    /// Sync` (put what changes behind a `Mutex` or an atomic).
    pub fn state<T: std::any::Any + Send + Sync>(mut self, value: T) -> Self {
        self.config.states.put(value);
        self
    }

    /// Sets the display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the human-readable description of the implementation.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.info.description = Some(text.into());
        self
    }

    /// Sets the website URL.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.info.website_url = Some(url.into());
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.info.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Guidance for the client's model about how to use this server.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Registers a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.registry.tools.push(Arc::new(tool));
        self
    }

    /// Registers a resource.
    pub fn resource(mut self, resource: Resource) -> Self {
        self.registry.resources.push(Arc::new(resource));
        self
    }

    /// Registers an MCP Apps view (a `ui://` resource with the extension's MIME type and
    /// `_meta.ui`); link tools to it with [`Tool::app_view`]. See [`crate::apps`].
    pub fn app_view(self, view: crate::apps::AppView) -> Self {
        self.resource(view.into_resource())
    }

    /// Registers a resource template.
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.registry.templates.push(Arc::new(template));
        self
    }

    /// Registers a prompt.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.registry.prompts.push(Arc::new(prompt));
        self
    }

    /// Offers log messages to clients (`logging` capability); handlers send them with
    /// [`Context::log`](crate::Context::log).
    pub fn logging(mut self) -> Self {
        self.logging = true;
        self
    }

    /// Offers `completion/complete` even when no prompt or template registered a completer
    /// (every answer is then empty).
    pub fn completions(mut self) -> Self {
        self.completions = true;
        self
    }

    /// Restricts the protocol revisions served (default: every released revision, both eras).
    pub fn versions(mut self, versions: VersionSet) -> Self {
        self.versions = versions;
        self
    }

    /// Items per page on every list method (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.config.page_size = n.max(1);
        self
    }

    /// Handler threads kept however idle (default: one per core), started as handlers first
    /// need them (a stdio server runs its handlers on the reader, and may never start one).
    /// Handlers run on the kit's executor (`mcp_core::executor`): a request goes to an idle
    /// handler thread, or, when none is idle, to a new one, up to
    /// [`ServerBuilder::max_workers`]; threads beyond this many end after 10 s without work.
    pub fn workers(mut self, n: usize) -> Self {
        self.config.workers = n.max(1);
        self
    }

    /// The most handler threads at once (default 64; at least `workers`). When that many are
    /// busy, requests wait in the queue ([`ServerBuilder::queue`]).
    pub fn max_workers(mut self, n: usize) -> Self {
        self.config.max_workers = n.max(1);
        self
    }

    /// Declares every handler of this server quick: it returns promptly and blocks only in the
    /// [`Context`](crate::Context)'s own waits (the client's answer to sampling, elicitation or
    /// roots; [`Context::wait_cancelled`](crate::Context::wait_cancelled)). Where the transport
    /// lets handlers run on its own thread (stdio, `HttpServer`), they then run there with
    /// no hand-off at all; the Context's waits still hand the stdio reading to another thread
    /// at the moment they block. Default false: before a handler runs, the stdio reading goes
    /// to another thread (one wake-up per call), so a handler that sleeps or does slow I/O can
    /// never stop `ping` or cancellation. Only turn it on when no handler blocks otherwise.
    pub fn quick_handlers(mut self, quick: bool) -> Self {
        self.config.quick_handlers = quick;
        self
    }

    /// Requests that may wait for a free handler thread before the transport is back-pressured
    /// (default 256).
    pub fn queue(mut self, n: usize) -> Self {
        self.config.queue = n.max(1);
        self
    }

    /// How long a handler waits for the client to answer sampling, elicitation or roots
    /// (default 60 s).
    pub fn client_request_timeout(mut self, d: Duration) -> Self {
        self.config.client_request_timeout = d;
        self
    }

    /// 2026-07-28 cache hints on list and read results (default: `ttlMs` 0, `private`).
    pub fn cache_hints(mut self, ttl: Duration, public: bool) -> Self {
        self.config.cache_ttl = ttl;
        self.config.cache_scope = if public { "public" } else { "private" };
        self
    }

    /// How long a 2026-07-28 `requestState` stays valid (default 10 minutes).
    pub fn request_state_ttl(mut self, d: Duration) -> Self {
        self.config.request_state_ttl = d;
        self
    }

    /// Where tasks are kept (tasks extension; default: a [`MemoryTaskStore`](crate::MemoryTaskStore) holding at most
    /// [`ServerBuilder::max_tasks`]). A store of your own can keep tasks across restarts or
    /// share them between instances. Setting one advertises the extension even when no tool
    /// declared task support at build time (for tools added later). Feature `tasks`.
    #[cfg(feature = "tasks")]
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.tasks.store = Some(store);
        self
    }

    /// The cap of the default in-memory task store (default 1000): beyond it, a call that would
    /// start a task is refused with an error saying so, until older tasks expire. One
    /// authorized requester may hold a quarter of them, and the tasks at most
    /// [`DEFAULT_TASK_STORE_BYTES`](crate::DEFAULT_TASK_STORE_BYTES) (a
    /// [`MemoryTaskStore`](crate::MemoryTaskStore) given to [`ServerBuilder::task_store`] sets
    /// its own). Feature `tasks`.
    #[cfg(feature = "tasks")]
    pub fn max_tasks(mut self, n: usize) -> Self {
        self.tasks.max_tasks = n.max(1);
        self
    }

    /// How long a task is kept from its creation, result included (`ttlMs`; default one hour;
    /// `None`: as long as the store lives). An input request inside a task waits at most this
    /// long for its answer. Feature `tasks`.
    #[cfg(feature = "tasks")]
    pub fn task_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.tasks.ttl = ttl;
        self
    }

    /// Puts `PREFIX.` in front of every task id this server mints (default: none). Behind a
    /// load balancer with the in-memory task store, a task lives on the instance that started
    /// it, and clients send its id in the `Mcp-Name` header of `tasks/get`, `tasks/update` and
    /// `tasks/cancel`: with the instance's tag here, the balancer routes those requests to that
    /// instance the way it routes legacy sessions (`deploy/multi/`). Letters, digits, `-` and
    /// `_` only (anything else is dropped), so the id stays a plain header value. Feature
    /// `tasks`.
    #[cfg(feature = "tasks")]
    pub fn task_id_prefix(mut self, prefix: &str) -> Self {
        let clean: String = prefix
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        self.tasks.id_prefix = (!clean.is_empty()).then_some(clean);
        self
    }

    /// The polling interval suggested to clients with each task (`pollIntervalMs`; default
    /// 500 ms). Feature `tasks`.
    #[cfg(feature = "tasks")]
    pub fn task_poll_interval(mut self, d: Duration) -> Self {
        self.tasks.poll_interval = d;
        self
    }

    /// Publishes resource updates and list changes on `broadcast`, and hands the events heard
    /// there (from every instance, this one included) to this instance's sessions, so a
    /// client listening on one instance hears of a change made on another. Default: none,
    /// events go straight to this instance's sessions. See [`crate::broadcast`].
    pub fn broadcast(mut self, broadcast: Arc<dyn Broadcast>) -> Self {
        self.broadcast = Some(broadcast);
        self
    }

    /// Rate limits per client over HTTP (Streamable HTTP and the HTTP+SSE transport): tool
    /// calls, completions, log messages and progress notifications (default
    /// [`RateLimits::default`]: 50 calls a second with bursts of 100, far above interactive
    /// use). A client is a legacy session, or in the 2026-07-28 era the authorized client or
    /// the peer's IP address (for a loopback peer, a local process or a proxy relaying many
    /// clients, its connection). A refused request gets a -32005 error with
    /// `data.retryAfterMs` (`429` with `Retry-After` when it is answered alone as JSON);
    /// notifications beyond the limit are dropped and counted ([`Server::rate_limited`]).
    pub fn rate_limits(mut self, limits: RateLimits) -> Self {
        self.rate_limits = limits;
        self
    }

    /// Rate limits over stdio and in-process connections (default [`RateLimits::off`]). There
    /// the one client is the process that started the server and owns it: it can stop it at
    /// any time, and a limit would only throttle a host or a benchmark that pipelines
    /// requests on purpose. Tools' own limits ([`Tool::rate_limit`]) still apply.
    pub fn stdio_rate_limits(mut self, limits: RateLimits) -> Self {
        self.stdio_rate_limits = limits;
        self
    }

    /// Pings every client every `interval` (legacy era; the 2026-07-28 revision has no
    /// server-to-client requests), and ends the session of one that leaves `misses` pings in a
    /// row unanswered (at least 1): over stdio the serve loop returns
    /// `mcp_stdio::Error::SessionEnded`, over HTTP the session closes (later requests get 404).
    /// Default: off. A client that exits or hangs up is noticed without pings (EOF, a failed
    /// write, session expiry), and an idle connection loses nothing; pings are for
    /// long-lived sessions whose client may hang without exiting, which nothing else notices.
    /// One thread serves every session of the server; each ping goes out from the handler
    /// executor, so a client that stopped reading cannot hold it up.
    pub fn ping_every(mut self, interval: Duration, misses: u32) -> Self {
        self.config.ping = Some(crate::ping::PingConfig {
            interval,
            misses: misses.max(1),
        });
        self
    }

    /// Starts the handler threads and returns the server.
    ///
    /// # Errors
    /// Two tools or prompts with one name, an app view outside `ui://` or a tool linked to a
    /// view no resource serves, or the threads could not be started.
    pub fn build(self) -> Result<Server, Error> {
        check_unique(
            self.registry.tools.iter().map(|t| t.def.name.as_str()),
            "tool",
        )?;
        check_unique(
            self.registry.prompts.iter().map(|p| p.def.name.as_str()),
            "prompt",
        )?;
        check_unique(
            self.registry.resources.iter().map(|r| r.def.uri.as_str()),
            "resource",
        )?;
        let mut capabilities = capabilities(&self.registry, self.logging, self.completions);
        let mut extensions = serde_json::Map::new();
        if self.tasks.declared(&self.registry.tools) {
            extensions.insert(
                tasks_ext::EXTENSION_ID.into(),
                tasks_ext::server_capability(),
            );
        }
        if crate::apps::check(&self.registry)? {
            extensions.insert(
                crate::apps::EXTENSION_ID.into(),
                crate::apps::server_capability(),
            );
        }
        if !extensions.is_empty() {
            capabilities["extensions"] = Value::Object(extensions);
        }
        if self.skills.is_some() {
            // Skill files are resources, so the extension needs the base capability.
            if capabilities.get("resources").is_none() {
                capabilities["resources"] = json!({ "listChanged": true });
            }
            capabilities["extensions"][skills_ext::EXTENSION_ID] =
                skills_ext::server_capability(true);
        }
        let mut engine_config =
            ServerConfig::builder(serde_json::to_value(&self.info).unwrap_or_else(|_| json!({})))
                .versions(self.versions)
                .capabilities(capabilities);
        if let Some(text) = self.instructions {
            engine_config = engine_config.instructions(text);
        }
        let engine_config = Arc::new(engine_config.build());
        let pool = Executor::builder()
            .name("mcp-worker")
            .min_threads(self.config.workers)
            .prestart(false)
            .max_threads(self.config.max_workers.max(self.config.workers))
            .queue(self.config.queue)
            .idle_timeout(IDLE_WORKER_TIMEOUT)
            .build()
            .map_err(|e| Error::Start(StartError::new(e)))?;
        let ping = self.config.ping;
        let mut server = Server {
            shared: Arc::new(Shared::new(
                engine_config,
                self.config,
                self.registry,
                pool,
                Tasks::new(self.tasks),
                Limiter::new(self.rate_limits, self.stdio_rate_limits),
                self.skills.clone(),
            )),
            sessions: Arc::default(),
            broadcast: self.broadcast,
            pinger: None,
        };
        if let Some(p) = ping {
            let stop = crate::ping::start(p.interval, Arc::downgrade(&server.sessions), ping_all)
                .map_err(|e| Error::Start(StartError::new(e)))?;
            server.pinger = Some(stop);
        }
        if let Some(skills) = &self.skills {
            // Weak, so a catalog that outlives the server does not keep it alive.
            let sessions = Arc::downgrade(&server.sessions);
            let broadcast = server.broadcast.clone();
            skills.on_change(move || {
                if let Some(sessions) = sessions.upgrade() {
                    announce(
                        &sessions,
                        broadcast.as_ref(),
                        &Event::ListChanged(ChangedList::Resources),
                    );
                }
            });
        }
        if let Some(b) = &server.broadcast {
            let sub = b.subscribe(LISTENER_CAPACITY).map_err(|e| {
                Error::Unsupported(format!("cannot subscribe to the broadcast: {e}"))
            })?;
            crate::broadcast::listen(sub, Arc::downgrade(&server.sessions), deliver)
                .map_err(|e| Error::Unsupported(format!("cannot start the listener: {e}")))?;
        }
        Ok(server)
    }
}

fn check_unique<'a>(names: impl Iterator<Item = &'a str>, what: &str) -> Result<(), Error> {
    let mut seen = std::collections::HashSet::new();
    for n in names {
        if !seen.insert(n) {
            return Err(Error::InvalidParams(format!("two {what}s named {n:?}")));
        }
    }
    Ok(())
}

/// Capabilities follow from what was registered: a list that exists can change at run time,
/// so `listChanged` is always offered with it.
fn capabilities(reg: &Registry, logging: bool, completions: bool) -> Value {
    let mut caps = serde_json::Map::new();
    if !reg.tools.is_empty() {
        caps.insert("tools".into(), json!({ "listChanged": true }));
    }
    if !reg.prompts.is_empty() {
        caps.insert("prompts".into(), json!({ "listChanged": true }));
    }
    if !reg.resources.is_empty() || !reg.templates.is_empty() {
        let subscribe = reg.resources.iter().any(|r| r.subscribable)
            || reg.templates.iter().any(|t| t.subscribable);
        let mut r = json!({ "listChanged": true });
        if subscribe {
            r["subscribe"] = json!(true);
        }
        caps.insert("resources".into(), r);
    }
    let has_completers = reg.prompts.iter().any(|p| !p.completers.is_empty())
        || reg.templates.iter().any(|t| !t.completers.is_empty());
    if completions || has_completers {
        caps.insert("completions".into(), json!({}));
    }
    if logging {
        caps.insert("logging".into(), json!({}));
    }
    Value::Object(caps)
}

/// A running server: serve it on any transport (it implements
/// [`Service`](mcp_core::service::Service)), and change what it offers while it runs.
/// Cloning is cheap; clones share everything.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
    sessions: Arc<Mutex<Sessions>>,
    broadcast: Option<Arc<dyn Broadcast>>,
    /// The ping thread's stop signal: it ends when the last handle goes.
    pinger: Option<Arc<crate::ping::Stop>>,
}

/// One tick of the ping thread: every open session checks its last ping and sends the next.
fn ping_all(sessions: &Mutex<Sessions>) {
    let live = sessions.lock().unwrap_or_else(|p| p.into_inner()).live();
    for s in live {
        s.ping_tick();
    }
}

/// To every instance through the broadcast, or straight to this instance's sessions.
fn announce(sessions: &Mutex<Sessions>, broadcast: Option<&Arc<dyn Broadcast>>, event: &Event) {
    match broadcast {
        Some(b) => {
            if let Err(e) = b.publish(event) {
                // The other instances miss it (they resync when their connection comes
                // back); this instance's sessions need not.
                log::warn!("broadcast publish failed: {e}; delivering locally only");
                deliver(sessions, event);
            }
        }
        None => deliver(sessions, event),
    }
}

/// Hands an event to the sessions open on this instance.
fn deliver(sessions: &Mutex<Sessions>, event: &Event) {
    let live = sessions.lock().unwrap_or_else(|p| p.into_inner()).live();
    for s in live {
        match event {
            Event::ResourceUpdated(uri) => s.resource_updated(uri),
            Event::ListChanged(kind) => s.list_changed(*kind),
            // Events were lost: every list may have changed.
            Event::Resync => {
                for kind in [
                    ChangedList::Tools,
                    ChangedList::Prompts,
                    ChangedList::Resources,
                ] {
                    s.list_changed(kind);
                }
            }
        }
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("capabilities", &self.shared.engine_config.capabilities())
            .finish()
    }
}

impl Server {
    /// What its sessions share, for tests that make a session by hand.
    #[cfg(test)]
    pub(crate) fn shared(&self) -> Arc<Shared> {
        Arc::clone(&self.shared)
    }

    /// Starts building a server with the implementation's name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            registry: Registry::default(),
            logging: false,
            completions: false,
            versions: VersionSet::all(),
            config: Config::default(),
            tasks: TaskSettings::default(),
            broadcast: None,
            rate_limits: RateLimits::default(),
            stdio_rate_limits: RateLimits::off(),
            skills: None,
        }
    }

    /// The capabilities the server advertises.
    pub fn capabilities(&self) -> &Value {
        self.shared.engine_config.capabilities()
    }

    /// The names of the registered tools, in list order.
    pub fn tool_names(&self) -> Vec<String> {
        self.shared
            .registry()
            .tools
            .iter()
            .map(|t| t.def.name.clone())
            .collect()
    }

    fn change(&self, kind: ChangedList, f: impl FnOnce(&mut Registry) -> bool) -> bool {
        let changed = {
            let mut reg = self.shared.registry_mut();
            f(&mut reg)
        };
        if changed {
            self.announce(&Event::ListChanged(kind));
        }
        changed
    }

    /// Adds a tool (replacing one of the same name) and tells clients the list changed.
    pub fn add_tool(&self, tool: Tool) {
        if tool.rate_limit != crate::tool::ToolLimit::Server {
            self.shared
                .tool_limits
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.change(ChangedList::Tools, |r| {
            r.tools.retain(|t| t.def.name != tool.def.name);
            r.tools.push(Arc::new(tool));
            true
        });
    }

    /// Removes a tool; returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.change(ChangedList::Tools, |r| {
            let before = r.tools.len();
            r.tools.retain(|t| t.def.name != name);
            r.tools.len() != before
        })
    }

    /// Adds a prompt (replacing one of the same name).
    pub fn add_prompt(&self, prompt: Prompt) {
        self.change(ChangedList::Prompts, |r| {
            r.prompts.retain(|p| p.def.name != prompt.def.name);
            r.prompts.push(Arc::new(prompt));
            true
        });
    }

    /// Removes a prompt; returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.change(ChangedList::Prompts, |r| {
            let before = r.prompts.len();
            r.prompts.retain(|p| p.def.name != name);
            r.prompts.len() != before
        })
    }

    /// Adds a resource (replacing one with the same URI).
    pub fn add_resource(&self, resource: Resource) {
        self.change(ChangedList::Resources, |r| {
            r.resources.retain(|x| x.def.uri != resource.def.uri);
            r.resources.push(Arc::new(resource));
            true
        });
    }

    /// Removes a resource; returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.change(ChangedList::Resources, |r| {
            let before = r.resources.len();
            r.resources.retain(|x| x.def.uri != uri);
            r.resources.len() != before
        })
    }

    /// Adds a resource template (replacing one with the same URI template).
    pub fn add_resource_template(&self, template: ResourceTemplate) {
        self.change(ChangedList::Resources, |r| {
            r.templates
                .retain(|t| t.def.uri_template != template.def.uri_template);
            r.templates.push(Arc::new(template));
            true
        });
    }

    /// Removes a resource template; returns whether it existed.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.change(ChangedList::Resources, |r| {
            let before = r.templates.len();
            r.templates.retain(|t| t.def.uri_template != uri_template);
            r.templates.len() != before
        })
    }

    /// Tells every client subscribed to `uri` that it changed
    /// (`notifications/resources/updated`).
    pub fn resource_updated(&self, uri: &str) {
        self.announce(&Event::ResourceUpdated(uri.to_owned()));
    }

    /// Tells every client listening for changes of `kind` that the list changed, for a change
    /// the server did not make through its own `add_*` / `remove_*` (its handlers read the
    /// list from elsewhere). With a broadcast, clients of every instance hear it.
    pub fn list_changed(&self, kind: ChangedList) {
        self.announce(&Event::ListChanged(kind));
    }

    /// To every instance through the broadcast, or straight to this instance's sessions.
    fn announce(&self, event: &Event) {
        announce(&self.sessions, self.broadcast.as_ref(), event);
    }

    fn sessions(&self) -> MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn live_sessions(&self) -> Vec<Arc<KitSession>> {
        self.sessions().live()
    }

    /// How many requests the rate limits refused, and how many notifications they dropped,
    /// since the server was built.
    pub fn rate_limited(&self) -> RateLimited {
        self.shared.limiter.counts()
    }

    /// How many sessions are open.
    pub fn session_count(&self) -> usize {
        self.live_sessions().len()
    }
}

impl Service for Server {
    fn open(&self, info: SessionInfo, out: Arc<dyn Outbound>) -> Arc<dyn Session> {
        let session = KitSession::new(Arc::clone(&self.shared), info, out);
        self.sessions().add(Arc::downgrade(&session));
        session
    }

    /// A server that pings ends the session of a client that stopped answering.
    fn ends_idle_sessions(&self) -> bool {
        self.shared.config.ping.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_list_stays_within_twice_the_open_sessions() {
        let server = Server::builder("t", "1").build().unwrap();
        let out: Arc<dyn Outbound> = Arc::new(Sink);
        let open = |n: usize| -> Vec<Arc<dyn Session>> {
            (0..n)
                .map(|_| {
                    server.open(
                        SessionInfo::new(mcp_core::service::TransportKind::Memory),
                        out.clone(),
                    )
                })
                .collect()
        };
        let kept = open(10);
        // Ten thousand short sessions, one at a time (a 2026-07-28 server's requests).
        for _ in 0..10_000 {
            drop(open(1));
        }
        let len = server.sessions().list.len();
        assert!(len <= 2 * 16 + 1, "{len} entries for 10 open sessions");
        assert_eq!(server.session_count(), 10);
        drop(kept);
        assert_eq!(server.session_count(), 0);
    }

    struct Sink;

    impl Outbound for Sink {
        fn send(
            &self,
            _msg: mcp_core::jsonrpc::Message,
            _related: Option<&mcp_core::jsonrpc::RequestId>,
        ) -> Result<(), mcp_core::service::Closed> {
            Ok(())
        }
    }
}
