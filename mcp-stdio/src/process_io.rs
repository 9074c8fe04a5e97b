//! The process's stdin and stdout, as the server reads and writes them.
//!
//! On unix each is a duplicate of its file descriptor, used as a plain file. std's own handles
//! take a lock on every read and write, and stdout keeps a line buffer in front of the
//! server's own (every write scanned for its last newline); the server, the only user of both
//! while it runs, needs neither. Elsewhere, or when a descriptor cannot be duplicated, std's
//! handles serve.

use std::fs::File;
use std::io::{self, Read, Write};

/// The process's stdin.
pub(crate) enum Input {
    /// A duplicate of descriptor 0.
    Own(File),
    /// std's handle.
    Std(io::Stdin),
}

/// The process's stdout.
pub(crate) enum Output {
    /// A duplicate of descriptor 1.
    Own(File),
    /// std's handle.
    Std(io::Stdout),
}

/// Stdin, for the server's reader. Bytes that an earlier `io::stdin()` read had buffered
/// (and not consumed) are not seen by it.
pub(crate) fn stdin() -> Input {
    let std = io::stdin();
    match duplicate(&std) {
        Some(f) => Input::Own(f),
        None => Input::Std(std),
    }
}

/// Stdout, for the server's writer; what std still buffered goes out first.
pub(crate) fn stdout() -> Output {
    let mut std = io::stdout();
    // Text printed before serving (a mistake, but it must not come after our answers).
    let _ = std.flush();
    match duplicate(&std) {
        Some(f) => Output::Own(f),
        None => Output::Std(std),
    }
}

#[cfg(unix)]
fn duplicate(handle: &impl std::os::fd::AsFd) -> Option<File> {
    handle.as_fd().try_clone_to_owned().ok().map(File::from)
}

#[cfg(not(unix))]
fn duplicate<T>(_: &T) -> Option<File> {
    None
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Own(f) => f.read(buf),
            Input::Std(s) => s.read(buf),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Own(f) => f.write(buf),
            Output::Std(s) => s.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Own(f) => f.write_all(buf),
            Output::Std(s) => s.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Own(f) => f.flush(),
            Output::Std(s) => s.flush(),
        }
    }
}
