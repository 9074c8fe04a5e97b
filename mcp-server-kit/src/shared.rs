//! The state every session of one server shares: the tunables, what is registered, the
//! executor that runs handlers, the cursor codec. It sits below the server handle, the
//! sessions and dispatch, which all read it; it knows none of them.

use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use mcp_core::engine::ServerConfig;
use mcp_core::executor::Executor;

use crate::cursor::CursorCodec;
use crate::prompt::Prompt;
use crate::rate::Limiter;
use crate::resource::{Resource, ResourceTemplate};
use crate::skills::Skills;
use crate::tasks::Tasks;
use crate::tool::Tool;

/// Tunables, with defaults that suit a desktop stdio server and a small HTTP service alike.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) page_size: usize,
    pub(crate) workers: usize,
    pub(crate) max_workers: usize,
    /// Handlers are declared quick: run them on the transport's thread without handing its
    /// reading over first (see `ServerBuilder::quick_handlers`).
    pub(crate) quick_handlers: bool,
    pub(crate) queue: usize,
    pub(crate) client_request_timeout: Duration,
    pub(crate) cache_ttl: Duration,
    pub(crate) cache_scope: &'static str,
    pub(crate) request_state_ttl: Duration,
    /// Server pings (`ServerBuilder::ping_every`), off by default.
    pub(crate) ping: Option<crate::ping::PingConfig>,
    /// The application's values handlers read (`ServerBuilder::state`, `Context::state`).
    pub(crate) states: States,
}

/// Values of the application's own types, one per type, that every handler may read.
#[derive(Clone, Default)]
pub(crate) struct States(Vec<(TypeId, Arc<dyn Any + Send + Sync>)>);

impl States {
    /// Keeps `value`, in place of any earlier value of its type.
    pub(crate) fn put<T: Any + Send + Sync>(&mut self, value: T) {
        let id = TypeId::of::<T>();
        self.0.retain(|(t, _)| *t != id);
        self.0.push((id, Arc::new(value)));
    }

    /// The value of type `T`, if one was given. A list: a server keeps a handful.
    pub(crate) fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        let id = TypeId::of::<T>();
        (self.0.iter())
            .find(|(t, _)| *t == id)
            .and_then(|(_, v)| v.downcast_ref::<T>())
    }
}

impl std::fmt::Debug for States {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "States({} values)", self.0.len())
    }
}

impl Default for Config {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Config {
            page_size: 100,
            // One worker per core kept ready; a request that finds none idle starts another
            // (handlers that block on I/O or on the client's answer), up to the maximum.
            workers: cores.clamp(1, 64),
            max_workers: 64,
            quick_handlers: false,
            queue: 256,
            client_request_timeout: Duration::from_secs(60),
            cache_ttl: Duration::ZERO,
            cache_scope: "private",
            request_state_ttl: Duration::from_secs(600),
            ping: None,
            states: States::default(),
        }
    }
}

/// What is registered, in registration order (lists are returned in that fixed order).
#[derive(Default)]
pub(crate) struct Registry {
    // Entries are shared, so a call clones a pointer, not a definition.
    pub(crate) tools: Vec<Arc<Tool>>,
    pub(crate) resources: Vec<Arc<Resource>>,
    pub(crate) templates: Vec<Arc<ResourceTemplate>>,
    pub(crate) prompts: Vec<Arc<Prompt>>,
}

/// State shared by every session of one server.
pub(crate) struct Shared {
    pub(crate) engine_config: Arc<ServerConfig>,
    pub(crate) config: Config,
    registry: RwLock<Registry>,
    /// How many times the registry was changed: a tool kept from an earlier look-up is the
    /// registry's while this has not moved (see `Call::quick_tool`).
    registry_changes: AtomicU64,
    pub(crate) pool: Executor,
    /// Cursors of sessions whose transport seals nothing (stdio, memory).
    pub(crate) cursors: CursorCodec,
    /// The tasks extension's tasks (store, settings, running handlers); without the `tasks`
    /// feature a unit no code reads (`tasks/off.rs`).
    #[cfg_attr(not(feature = "tasks"), allow(dead_code))]
    pub(crate) tasks: Arc<Tasks>,
    /// Rate limits and the buckets of 2026-07-28 clients.
    pub(crate) limiter: Limiter,
    /// Some tool has a rate limit of its own (set when one is registered, never cleared), so
    /// a call must look its tool up even where the server limits nothing.
    pub(crate) tool_limits: AtomicBool,
    /// The skills extension's catalog, when the server serves skills.
    pub(crate) skills: Option<Skills>,
}

impl Shared {
    /// The state of a server just built, with a fresh cursor codec and request-state key
    /// (the sealer of states and cursors that clients carry comes from the transport, with
    /// each session: `SessionInfo::sealer`).
    pub(crate) fn new(
        engine_config: Arc<ServerConfig>,
        config: Config,
        registry: Registry,
        pool: Executor,
        tasks: Tasks,
        limiter: Limiter,
        skills: Option<Skills>,
    ) -> Shared {
        let tool_limits = registry
            .tools
            .iter()
            .any(|t| t.rate_limit != crate::tool::ToolLimit::Server);
        Shared {
            limiter,
            tool_limits: AtomicBool::new(tool_limits),
            engine_config,
            cursors: CursorCodec::new(),
            config,
            registry: RwLock::new(registry),
            registry_changes: AtomicU64::new(0),
            pool,
            tasks: Arc::new(tasks),
            skills,
        }
    }

    pub(crate) fn registry(&self) -> RwLockReadGuard<'_, Registry> {
        self.registry.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The registry, for a change made by the [`Server`](crate::Server) handle.
    pub(crate) fn registry_mut(&self) -> RwLockWriteGuard<'_, Registry> {
        let guard = self.registry.write().unwrap_or_else(|p| p.into_inner());
        // Counted under the lock, before the change: whoever reads the new count and looks
        // again waits for the change to be made.
        self.registry_changes.fetch_add(1, Ordering::AcqRel);
        guard
    }

    /// See `registry_changes`: a plain load, where taking the registry's lock is two atomic
    /// operations.
    pub(crate) fn registry_version(&self) -> u64 {
        self.registry_changes.load(Ordering::Acquire)
    }

    /// The tool named `name`, and the registry's version it was found in.
    pub(crate) fn find_tool(&self, name: &str) -> (u64, Option<Arc<Tool>>) {
        let version = self.registry_version();
        let tool = self
            .registry()
            .tools
            .iter()
            .find(|t| t.def.name == name)
            .cloned();
        (version, tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_state_per_type_the_later_wins() {
        let mut s = States::default();
        s.put(7u8);
        s.put(String::from("x"));
        s.put(8u8);
        assert_eq!(s.get::<u8>(), Some(&8));
        assert_eq!(s.get::<String>().map(String::as_str), Some("x"));
        assert_eq!(s.get::<u16>(), None);
    }
}
