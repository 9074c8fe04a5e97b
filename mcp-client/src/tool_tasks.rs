//! What this client learned of each tool's `execution.taskSupport` (2025-11-25): a tool that
//! forbids tasks (the default) must never be asked for one, and a tool that requires one must
//! be called as a task. Learned from a listing of the server's tools made when a call needs
//! to know, kept until the server says its tools changed.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use mcp_core::types::Tool;

/// How a tool may run with respect to 2025-11-25 tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Support {
    /// Never as a task (the default, and what an unknown value means).
    Forbidden,
    /// Either way.
    Optional,
    /// Only as a task.
    Required,
}

impl Support {
    pub(crate) fn of(tool: &Tool) -> Support {
        match tool
            .execution
            .as_ref()
            .and_then(|e| e.task_support.as_deref())
        {
            Some("optional") => Support::Optional,
            Some("required") => Support::Required,
            _ => Support::Forbidden,
        }
    }
}

/// The most tools remembered, and the longest name (the spec's limit for tool names is 128
/// characters): a hostile server's list cannot grow the client's memory. A tool beyond these
/// is looked up again when it is called.
const MAX_KNOWN: usize = 4096;
const MAX_NAME_BYTES: usize = 512;

/// The tools' support, as of one generation of the server's tool list.
#[derive(Debug, Default)]
pub(crate) struct ToolTasks(Mutex<Known>);

#[derive(Debug, Default)]
struct Known {
    generation: u64,
    tools: HashMap<String, Support>,
}

impl ToolTasks {
    fn lock(&self) -> MutexGuard<'_, Known> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records what a listing begun at `generation` showed; a listing older than what is
    /// known already is dropped, a newer one replaces it.
    pub(crate) fn record(&self, generation: u64, tools: &[Tool]) {
        let mut known = self.lock();
        if generation < known.generation {
            return;
        }
        if generation > known.generation {
            known.tools.clear();
            known.generation = generation;
        }
        for tool in tools {
            if tool.name.len() > MAX_NAME_BYTES || known.tools.len() >= MAX_KNOWN {
                continue;
            }
            known.tools.insert(tool.name.clone(), Support::of(tool));
        }
    }

    /// The tool's support, if a listing of the current `generation` showed it.
    pub(crate) fn get(&self, generation: u64, name: &str) -> Option<Support> {
        let known = self.lock();
        if known.generation != generation {
            return None;
        }
        known.tools.get(name).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, support: Option<&str>) -> Tool {
        let mut v = json!({"name": name, "inputSchema": {"type": "object"}});
        if let Some(s) = support {
            v["execution"] = json!({"taskSupport": s});
        }
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn absent_or_unknown_support_is_forbidden() {
        assert_eq!(Support::of(&tool("a", None)), Support::Forbidden);
        assert_eq!(
            Support::of(&tool("a", Some("forbidden"))),
            Support::Forbidden
        );
        assert_eq!(
            Support::of(&tool("a", Some("sometimes"))),
            Support::Forbidden
        );
        assert_eq!(Support::of(&tool("a", Some("optional"))), Support::Optional);
        assert_eq!(Support::of(&tool("a", Some("required"))), Support::Required);
    }

    #[test]
    fn a_newer_generation_forgets_and_an_older_listing_is_dropped() {
        let t = ToolTasks::default();
        t.record(0, &[tool("a", Some("required"))]);
        assert_eq!(t.get(0, "a"), Some(Support::Required));
        // The tools changed: nothing is known of generation 1 yet.
        assert_eq!(t.get(1, "a"), None);
        t.record(1, &[tool("b", Some("optional"))]);
        assert_eq!(t.get(1, "a"), None);
        assert_eq!(t.get(1, "b"), Some(Support::Optional));
        // A listing that began before the change arrives late: dropped.
        t.record(0, &[tool("a", Some("required"))]);
        assert_eq!(t.get(1, "a"), None);
    }

    #[test]
    fn memory_is_bounded_by_count_and_name_length() {
        let t = ToolTasks::default();
        let many: Vec<Tool> = (0..MAX_KNOWN + 10)
            .map(|i| tool(&format!("t{i}"), None))
            .collect();
        t.record(0, &many);
        assert_eq!(t.get(0, &format!("t{}", MAX_KNOWN + 5)), None);
        assert_eq!(t.get(0, "t0"), Some(Support::Forbidden));
        let t = ToolTasks::default();
        t.record(
            0,
            &[tool(&"x".repeat(MAX_NAME_BYTES + 1), Some("required"))],
        );
        assert_eq!(t.get(0, &"x".repeat(MAX_NAME_BYTES + 1)), None);
    }
}
