//! Shaping (placeholder).
