//! The process's stdin and stdout, as the server reads and writes them.
//!
//! On unix each is a duplicate of its file descriptor, used as a plain file. std's own handles
//! take a lock on every read and write, and stdout keeps a line buffer in front of the
//! server's own (every write scanned for its last newline); the server, the only user of both
//! while it runs, needs neither. A file also reads straight into the reader's buffer, where a
//! wrapper would have std zero the buffer first (64 KiB of memory touched for nothing). A
//! descriptor that is not open reads as the end of input and swallows what is written, as
//! std's handles treat it. Elsewhere std's handles serve.

#[cfg(unix)]
pub(crate) use unix::{stdin, stdout};

#[cfg(not(unix))]
pub(crate) use other::{stdin, stdout};

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::io::{self, Write};
    use std::os::fd::AsFd;

    /// Stdin, for the server's reader. Bytes that an earlier `io::stdin()` read had buffered
    /// (and not consumed) are not seen by it.
    pub(crate) fn stdin() -> io::Result<File> {
        duplicate(&io::stdin()).map_or_else(null, Ok)
    }

    /// Stdout, for the server's writer; what std still buffered goes out first.
    pub(crate) fn stdout() -> io::Result<File> {
        let mut std = io::stdout();
        // Text printed before serving (a mistake, but it must not come after our answers).
        let _ = std.flush();
        duplicate(&std).map_or_else(null, Ok)
    }

    fn duplicate(handle: &impl AsFd) -> Option<File> {
        handle.as_fd().try_clone_to_owned().ok().map(File::from)
    }

    /// For a descriptor that is not open: nothing to read, nowhere to write.
    fn null() -> io::Result<File> {
        File::options().read(true).write(true).open("/dev/null")
    }
}

#[cfg(not(unix))]
mod other {
    use std::io::{self, Write};

    /// Stdin, for the server's reader.
    pub(crate) fn stdin() -> io::Result<io::Stdin> {
        Ok(io::stdin())
    }

    /// Stdout, for the server's writer.
    pub(crate) fn stdout() -> io::Result<io::Stdout> {
        let mut std = io::stdout();
        let _ = std.flush();
        Ok(std)
    }
}
