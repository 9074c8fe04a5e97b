//! Placeholder.
#![deny(missing_docs)]
