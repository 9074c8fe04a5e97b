//! An MCP Apps server (`io.modelcontextprotocol/ui`): one tool, `show_weather`, linked to an
//! HTML view (`ui://weather/view`, `examples/apps/weather.html`) that a host renders in a
//! sandboxed iframe and fills with the tool's result. The view is self-contained (no
//! network, so it declares no CSP origins) and speaks the view side of the host protocol
//! itself; `scripts/apps-check.sh` renders it in headless Chromium.
//!
//! The forecast is made up from the city's name, so the same call always gives the same
//! answer; the text content says it all too, for hosts that show no views.
//!
//! `target/release/apps` (stdio) or `target/release/apps --http 127.0.0.1:8080`.
use mcp_server_kit::apps::AppView;
use mcp_server_kit::types::CallToolResult;
use mcp_server_kit::{Context, Error, Server, Tool, schema::Schema};
use serde_json::json;

/// The view's URI, named by the tool's `_meta.ui.resourceUri`.
const VIEW_URI: &str = "ui://weather/view";
const VIEW_HTML: &str = include_str!("../../apps/weather.html");

#[derive(serde::Deserialize)]
struct WeatherArgs {
    city: String,
}

/// A deterministic forecast for `city`: the same name always gives the same weather.
fn forecast(city: &str) -> CallToolResult {
    let seed = city
        .bytes()
        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    let conditions = ["sunny", "cloudy", "rainy", "windy", "foggy"][(seed % 5) as usize];
    let temperature = i64::from(seed % 35) - 5;
    let data = json!({"city": city, "temperatureC": temperature, "conditions": conditions});
    let mut result = CallToolResult::text(format!("{city}: {temperature} °C, {conditions}"));
    result.structured_content = Some(data);
    result
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let view = AppView::new(VIEW_URI, "weather_view", VIEW_HTML)
        .title("Weather")
        .description("Shows the forecast show_weather returns")
        .prefers_border(true);
    let server =
        mcp_examples::configure(Server::builder("apps", env!("CARGO_PKG_VERSION")), &args)?
            .app_view(view)
            .tool(
                Tool::new("show_weather", |a: WeatherArgs, _ctx: &Context| {
                    Ok::<_, Error>(forecast(&a.city))
                })
                .description("The weather in a city (made up), shown in an interactive view")
                .input_schema(
                    Schema::object().property("city", Schema::string().description("City name")),
                )
                .output_schema(
                    Schema::object()
                        .property("city", Schema::string())
                        .property("temperatureC", Schema::integer())
                        .property("conditions", Schema::string()),
                )
                .app_view(VIEW_URI),
            )
            .build()?;
    mcp_examples::serve(server, args.into_iter())?;
    Ok(())
}
