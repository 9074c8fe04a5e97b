//! A client of a kit server served by the real stdio transport (`mcp_stdio::serve_on`) over a
//! socket pair, driven with JSON values.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, sync_channel};

use mcp_server_kit::Server;
use serde_json::{Value, json};

use super::WAIT;

pub struct Client {
    pub input: UnixStream,
    output: BufReader<UnixStream>,
    /// The result of `serve_on`, once it returns.
    pub served: Receiver<Result<(), mcp_stdio::Error>>,
}

impl Client {
    pub fn start(server: Server) -> Client {
        Client::start_with(server, mcp_stdio::Config::default())
    }

    /// [`Client::start`] with this transport configuration.
    pub fn start_with(server: Server, config: mcp_stdio::Config) -> Client {
        let (ours, theirs) = UnixStream::pair().unwrap();
        ours.set_read_timeout(Some(WAIT)).unwrap();
        let (tx, served) = sync_channel(1);
        let reader = theirs.try_clone().unwrap();
        std::thread::spawn(move || {
            let r = mcp_stdio::serve_on(reader, theirs, server, &config);
            let _ = tx.send(r);
        });
        let output = BufReader::new(ours.try_clone().unwrap());
        Client {
            input: ours,
            output,
            served,
        }
    }

    pub fn send(&mut self, v: Value) {
        let mut line = v.to_string();
        line.push('\n');
        self.input.write_all(line.as_bytes()).unwrap();
    }

    /// The next line from the server.
    pub fn next(&mut self) -> Value {
        serde_json::from_str(&self.next_line()).unwrap()
    }

    /// The next line from the server, as it was written.
    pub fn next_line(&mut self) -> String {
        let mut line = String::new();
        self.output.read_line(&mut line).expect("a line in time");
        line
    }

    /// Runs the 2025-11-25 handshake (the server's pings, if any, are skipped).
    pub fn initialize(&mut self) {
        self.initialize_with(json!({}));
    }

    /// [`Client::initialize`], declaring these client capabilities.
    pub fn initialize_with(&mut self, capabilities: Value) {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "c", "version": "1"}}}),
        );
        loop {
            let v = self.next();
            if v["id"] == 0 && v.get("method").is_none() {
                break;
            }
        }
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Ends the server's input (EOF), as a client that exits does.
    pub fn close_input(&self) {
        self.input.shutdown(std::net::Shutdown::Write).unwrap();
    }
}
