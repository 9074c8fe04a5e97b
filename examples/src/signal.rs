//! Waiting for SIGTERM or SIGINT (Ctrl-C), so that the HTTP examples can drain before they exit.
//!
//! A self-pipe of our own rather than a signal crate: it is about thirty lines, the examples
//! need nothing else from signals, and it adds no dependency. A signal handler may only do
//! async-signal-safe work, so it writes one byte to a pipe; the waiting thread reads it. The
//! pipe's write end has to live in a static, the one place a handler can reach.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::FromRawFd;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

const SIGINT: c_int = 2;
const SIGTERM: c_int = 15;

unsafe extern "C" {
    fn pipe(fds: *mut c_int) -> c_int;
    fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
    fn signal(signum: c_int, handler: usize) -> usize;
}

/// The pipe's write end, for the handler (-1 until [`Termination::install`] sets it up).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(_: c_int) {
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; the buffer is a static byte.
        unsafe { write(fd, b"x".as_ptr().cast(), 1) };
    }
}

/// SIGTERM and SIGINT, caught from [`Termination::install`] on.
pub struct Termination(File);

impl Termination {
    /// Catches SIGTERM and SIGINT from now on (before the server says it listens, so that no
    /// early signal is lost to the default action).
    ///
    /// # Errors
    /// When the pipe cannot be made.
    pub fn install() -> io::Result<Termination> {
        let mut fds = [0 as c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        if unsafe { pipe(fds.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        WAKE_FD.store(fds[1], Ordering::SeqCst);
        // SAFETY: the handler only does async-signal-safe work (see above).
        unsafe {
            signal(SIGTERM, on_signal as extern "C" fn(c_int) as usize);
            signal(SIGINT, on_signal as extern "C" fn(c_int) as usize);
        }
        // SAFETY: the read end was just made by pipe(2) and is owned by nothing else.
        Ok(Termination(unsafe { File::from_raw_fd(fds[0]) }))
    }

    /// Blocks until the process gets SIGTERM or SIGINT.
    ///
    /// # Errors
    /// When the pipe cannot be read.
    pub fn wait(mut self) -> io::Result<()> {
        let mut byte = [0u8; 1];
        loop {
            match self.0.read(&mut byte) {
                Ok(1) => return Ok(()),
                Ok(_) => return Err(io::Error::other("the signal pipe closed")),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
