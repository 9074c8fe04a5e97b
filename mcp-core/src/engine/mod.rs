//! The sans-I/O protocol engine (being filled in).
