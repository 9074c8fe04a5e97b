//! The least any stdio server can do: for each line, copy its `"id":` value into one canned
//! answer and write it. No JSON is parsed, nothing is checked, nothing is allocated per line.
//!
//! It is no MCP server (no handshake, no tool, no error for a bad line: `stdio-bench` runs it
//! with `--raw`). It is the bound of window 1: a round trip there is the server's code plus two
//! pipe wake-ups, and this server has next to no code, so what it reaches is what the wake-ups
//! leave. A real server level with it at window 1 cannot go ahead there by being faster.

use std::io::{self, Read, Write};

/// The answer after the id: the same text block `echo` answers (`hello`, the bench's message).
const TAIL: &[u8] = br#","result":{"content":[{"type":"text","text":"hello"}]}}"#;

fn main() -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut output = io::stdout().lock();
    let mut buf = vec![0u8; 64 * 1024];
    let mut answers = Vec::with_capacity(64 * 1024);
    let mut held = 0;
    loop {
        if held == buf.len() {
            // A line longer than the buffer: not the bench's; give up on it.
            held = 0;
        }
        let n = input.read(&mut buf[held..])?;
        if n == 0 {
            return Ok(());
        }
        held += n;
        let mut start = 0;
        while let Some(len) = buf[start..held].iter().position(|&b| b == b'\n') {
            answer(&buf[start..start + len], &mut answers);
            start += len + 1;
        }
        // Every complete line read so far is answered with one write.
        if !answers.is_empty() {
            output.write_all(&answers)?;
            output.flush()?;
            answers.clear();
        }
        buf.copy_within(start..held, 0);
        held -= start;
    }
}

/// Appends the answer to `line` (nothing for a line without an id: a notification).
fn answer(line: &[u8], out: &mut Vec<u8>) {
    const KEY: &[u8] = b"\"id\":";
    let Some(at) = line.windows(KEY.len()).position(|w| w == KEY) else {
        return;
    };
    let id = &line[at + KEY.len()..];
    let end = id
        .iter()
        .position(|&b| b == b',' || b == b'}')
        .unwrap_or(id.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(&id[..end]);
    out.extend_from_slice(TAIL);
    out.push(b'\n');
}
