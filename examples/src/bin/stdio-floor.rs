//! The floor for the stdio benchmark: the least a line-delimited JSON-RPC server can do.
//!
//! It reads stdin line by line, parses each line into a `serde_json::Value` (as any real server
//! must), and answers every request with a canned `tools/call` echo result carrying the request's
//! id, flushing after each answer like a real stdio transport does. Notifications get no answer.
//! `stdio-bench` runs it next to the real `echo` server, so the ratio between the two shows what
//! the SDK layers cost on top of pipe I/O and JSON parsing.

use std::io::{self, BufRead, BufWriter, Write};

fn main() {
    if let Err(e) = serve(io::stdin().lock(), io::stdout().lock()) {
        eprintln!("stdio-floor: {e}");
        std::process::exit(1);
    }
}

/// Answers each request line until end of input.
fn serve(input: impl BufRead, output: impl Write) -> io::Result<()> {
    let mut out = BufWriter::new(output);
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(msg) => {
                // Requests carry both a method and an id; anything else needs no answer.
                let Some(id) = msg.get("id").filter(|_| msg.get("method").is_some()) else {
                    continue;
                };
                let id = serde_json::to_string(id)?;
                writeln!(
                    out,
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hello"}}]}}}}"#
                )?;
            }
            Err(_) => {
                writeln!(
                    out,
                    r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32700,"message":"Parse error"}}}}"#
                )?;
            }
        }
        out.flush()?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::serve;

    #[test]
    fn answers_requests_with_their_id_and_skips_notifications() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"s-1","method":"tools/call"}"#,
            "\nnot json\n"
        );
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out).expect("in-memory I/O cannot fail");
        let lines: Vec<serde_json::Value> = String::from_utf8(out)
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("each answer is JSON"))
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["id"], 7);
        assert_eq!(lines[0]["result"]["content"][0]["text"], "hello");
        assert_eq!(lines[1]["id"], "s-1");
        assert_eq!(lines[2]["error"]["code"], -32700);
    }
}
