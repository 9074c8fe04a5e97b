use mcp_server_kit::{Context, Error, Server, tool};

/// Adds two integers.
#[tool]
fn add(left: i64, right: i64) -> i64 {
    left.saturating_add(right)
}

/// Divides one number by another.
#[tool]
fn divide(
    /// The dividend.
    a: f64,
    /// The divisor, not zero.
    b: f64,
) -> Result<f64, Error> {
    if b == 0.0 {
        return Err(Error::InvalidParams("b must not be zero".into()));
    }
    Ok(a / b)
}

/// Counts to `to`, reporting progress; stops when cancelled.
#[tool]
fn count(to: u32, ctx: &Context) -> Result<String, Error> {
    for n in 1..=to {
        if ctx.is_cancelled() {
            return Err(Error::Cancelled);
        }
        ctx.progress(f64::from(n), Some(f64::from(to)), None);
    }
    Ok(format!("counted to {to}"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("calc", "1.0.0")
        .tool(add_tool())
        .tool(divide_tool())
        .tool(count_tool())
        .build()?;
    Ok(mcp_stdio::serve(server)?)
}
