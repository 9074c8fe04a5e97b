//! What the tests that run `everything --http` share.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::time::Duration;

use crossbeam_channel::bounded;

/// The `http://ADDR/mcp` URL a server started with `--http 127.0.0.1:0` prints on stderr
/// (piped); its stderr is drained afterwards so it never blocks on a full pipe.
pub fn listening_url(child: &mut Child) -> String {
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = bounded(1);
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if let Some(rest) = line.split_once("listening on ").map(|x| x.1) {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(rest.trim().to_owned());
                }
            }
        }
    });
    let url: String = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("everything prints its address");
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    url
}
