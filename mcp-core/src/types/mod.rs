//! Typed MCP messages for every released revision (being filled in).
