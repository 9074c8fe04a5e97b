//! An MCP server inside a synchronous host application.
//!
//! The host is a plain simulation loop that owns its state (a thermostat driving a room's
//! temperature) and knows nothing about MCP. The server runs on a thread of its own and talks
//! to the loop through a bounded channel: each tool sends a command with a reply channel and
//! blocks for the answer, so the host's state is only ever touched by the host's thread. The
//! loop announces changes with `Server::resource_updated`, so subscribed clients hear about
//! them. This is the shape of a plugin in an editor, a game or a desktop app.
//!
//! Run: `embedded` (stdio) or `embedded --http 127.0.0.1:PORT`.

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::Duration;

use mcp_server_kit::schema::Schema;
use mcp_server_kit::types::ResourceContents;
use mcp_server_kit::{Context, Error, NoArgs, Resource, Server, Tool, with_mime};
use serde_json::json;

/// The host's own state: no MCP types in here.
#[derive(Debug, Clone, Copy)]
struct Room {
    temperature: f64,
    target: f64,
    heating: bool,
    ticks: u64,
}

impl Room {
    /// One step of the simulation: heat towards the target, lose heat otherwise.
    fn step(&mut self) {
        self.heating = self.temperature < self.target - 0.25;
        self.temperature += if self.heating { 0.5 } else { -0.1 };
        self.ticks += 1;
    }

    fn status(&self) -> serde_json::Value {
        json!({
            "temperature": (self.temperature * 10.0).round() / 10.0,
            "target": self.target,
            "heating": self.heating,
            "ticks": self.ticks,
        })
    }
}

/// What the MCP side may ask of the host loop.
enum Command {
    Status(SyncSender<Room>),
    SetTarget(f64, SyncSender<Room>),
    Quit,
}

/// The host's loop: it owns `room`, applies commands between ticks, and returns on `Quit`.
fn host_loop(commands: Receiver<Command>, server: Server) {
    let mut room = Room {
        temperature: 18.0,
        target: 21.0,
        heating: false,
        ticks: 0,
    };
    let tick = Duration::from_millis(500);
    loop {
        // Waiting for a command doubles as the tick timer.
        match commands.recv_timeout(tick) {
            Ok(Command::Status(reply)) => {
                let _ = reply.send(room);
            }
            Ok(Command::SetTarget(t, reply)) => {
                room.target = t;
                let _ = reply.send(room);
                server.resource_updated("thermostat://status");
            }
            Ok(Command::Quit) | Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {
                let was_heating = room.heating;
                room.step();
                if room.heating != was_heating {
                    server.resource_updated("thermostat://status");
                }
            }
        }
    }
}

/// Asks the host loop something and waits for the answer (bounded by a timeout, since the
/// host might be busy or gone).
fn ask(
    host: &SyncSender<Command>,
    make: impl FnOnce(SyncSender<Room>) -> Command,
) -> Result<Room, Error> {
    let (tx, rx) = sync_channel(1);
    host.send(make(tx))
        .map_err(|_| Error::msg("the host application has stopped"))?;
    rx.recv_timeout(Duration::from_secs(5))
        .map_err(|_| Error::msg("the host application did not answer"))
}

#[derive(serde::Deserialize)]
struct SetTarget {
    celsius: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (host_tx, host_rx) = sync_channel::<Command>(16);

    let status_host = host_tx.clone();
    let set_host = host_tx.clone();
    let read_host = host_tx.clone();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = Server::builder("thermostat", env!("CARGO_PKG_VERSION"));
    let server = mcp_examples::configure(server, &args)?
        .instructions("Controls a simulated room thermostat.")
        .tool(
            Tool::new("get_status", move |_: NoArgs, _: &Context| {
                let room = ask(&status_host, Command::Status)?;
                Ok::<_, Error>(room.status().to_string())
            })
            .description("Reads the room temperature, the target and whether it is heating"),
        )
        .tool(
            Tool::new("set_target", move |a: SetTarget, _: &Context| {
                if !(5.0..=30.0).contains(&a.celsius) {
                    return Err(Error::InvalidParams(
                        "celsius must be between 5 and 30".into(),
                    ));
                }
                let room = ask(&set_host, |r| Command::SetTarget(a.celsius, r))?;
                Ok(room.status().to_string())
            })
            .description("Sets the target temperature")
            .input_schema(
                Schema::object().property(
                    "celsius",
                    Schema::number()
                        .minimum(5.0)
                        .maximum(30.0)
                        .description("Target in °C"),
                ),
            ),
        )
        .resource(
            Resource::new("thermostat://status", "status", move |_: &Context| {
                let room = ask(&read_host, Command::Status)?;
                let text = room.status().to_string();
                Ok(vec![with_mime(
                    ResourceContents::text("thermostat://status", text),
                    "application/json",
                )])
            })
            .mime_type("application/json")
            .description("The thermostat's state; subscribe to hear when heating turns on or off")
            .subscribable(),
        )
        .build()?;

    // The host keeps the main thread; MCP gets a thread of its own.
    let mcp_server = server.clone();
    let mcp = std::thread::Builder::new()
        .name("mcp".into())
        .spawn(move || {
            mcp_examples::serve(mcp_server, args.into_iter()).map_err(|e| e.to_string())
        })?;

    // When the MCP side ends (stdin closed), tell the host loop to stop.
    let quit = host_tx.clone();
    drop(host_tx);
    let watcher = std::thread::Builder::new()
        .name("mcp-watch".into())
        .spawn(move || {
            let result = mcp.join();
            let _ = quit.send(Command::Quit);
            result
        })?;

    host_loop(host_rx, server);

    match watcher.join() {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(e))) => Err(e.into()),
        _ => Err("the MCP thread panicked".into()),
    }
}
