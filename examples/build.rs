//! Links `echo` with its functions in the order of `echo.order` (the code a running server
//! uses first, together), where the linker is known to be lld: Rust's default on
//! x86_64-unknown-linux-gnu from 1.90 on, unless the build picks another. The order is an
//! optimisation only: a build without it is the same program, a little larger in memory
//! (README, "A stdio server's size").

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=echo.order");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    if env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") {
        return;
    }
    // A linker chosen in the flags (another one, or lld turned off) may not take the option.
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("linker") || flags.contains("fuse-ld") {
        return;
    }
    if env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some() {
        return;
    }
    if rustc_minor().is_none_or(|m| m < 90) {
        return;
    }
    let order = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("echo.order");
    if order.is_file() {
        println!(
            "cargo:rustc-link-arg-bin=echo=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        // Symbols the file names that this build does not have (another version of a
        // dependency, other features) are skipped.
        println!("cargo:rustc-link-arg-bin=echo=-Wl,--no-warn-symbol-ordering");
    }
}

/// The minor version of the compiler building this crate (`rustc 1.95.0 (...)`: 95).
fn rustc_minor() -> Option<u32> {
    let rustc = env::var_os("RUSTC")?;
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    version.split('.').nth(1)?.parse().ok()
}
