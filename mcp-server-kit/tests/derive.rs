//! Schemas from types: `#[derive(JsonSchema)]` follows serde's attributes, [`Tool::typed`]
//! publishes the derived input schema, and [`Structured`] results carry `structuredContent`,
//! a text fallback and a declared `outputSchema`.
//!
//! Where it can, a test holds the schema to serde itself: what serde writes must validate, and
//! the member names the schema lists must be the ones serde writes.
#![cfg(feature = "derive")]

use std::collections::{BTreeMap, HashMap};

use mcp_server_kit::schema::JsonSchema;
use mcp_server_kit::validate::validate;
use mcp_server_kit::{Context, Error, NoArgs, Server, Structured, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod common;
use common::Peer;

/// `value` fits `T`'s schema.
fn fits<T: JsonSchema>(value: &Value) {
    let s = T::schema();
    if let Err(e) = validate(&s, value) {
        panic!("{value} should fit {s}: {e}");
    }
}

/// `value` does not fit `T`'s schema.
fn refused<T: JsonSchema>(value: &Value) {
    let s = T::schema();
    assert!(validate(&s, value).is_err(), "{value} should not fit {s}");
}

/// The member names a schema lists, sorted.
fn property_names(schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("properties in {schema}"))
        .keys()
        .cloned()
        .collect();
    names.sort();
    names
}

/// The member names serde writes for `v`, sorted.
fn serde_names(v: &impl Serialize) -> Vec<String> {
    let mut names: Vec<String> = serde_json::to_value(v)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------- structs and their fields

/// A note to keep.
///
/// Second paragraph, wrapped
/// over two lines.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Note {
    /// The note's text.
    text: String,
    /// Optional priority.
    priority: Option<u8>,
    /// Tags to file it under.
    #[serde(default)]
    tags: Vec<String>,
    #[serde(rename = "createdBy")]
    author: String,
    #[serde(skip)]
    #[allow(dead_code)]
    cache: u64,
    #[serde(skip_deserializing)]
    #[allow(dead_code)]
    computed: u64,
    /// Written only when set; still required on input.
    #[serde(skip_serializing_if = "String::is_empty")]
    folder: String,
}

#[test]
fn doc_comments_become_descriptions() {
    let s = Note::schema();
    assert_eq!(
        s["description"],
        "A note to keep.\n\nSecond paragraph, wrapped over two lines."
    );
    assert_eq!(s["properties"]["text"]["description"], "The note's text.");
    assert_eq!(
        s["properties"]["tags"]["description"],
        "Tags to file it under."
    );
    // No doc comment, no description.
    assert!(s["properties"]["createdBy"].get("description").is_none());
}

#[test]
fn option_and_default_are_not_required_and_skip_serializing_if_changes_nothing() {
    let s = Note::schema();
    assert_eq!(s["type"], "object");
    assert_eq!(s["required"], json!(["text", "createdBy", "folder"]));
    fits::<Note>(&json!({"text": "t", "createdBy": "me", "folder": "f"}));
    refused::<Note>(&json!({"createdBy": "me", "folder": "f"}));
    // Option is nullable, as serde reads null as None.
    fits::<Note>(&json!({"text": "t", "createdBy": "me", "folder": "", "priority": null}));
    refused::<Note>(&json!({"text": "t", "createdBy": "me", "folder": "", "priority": 300}));
}

#[test]
fn rename_and_skip_follow_serde() {
    let s = Note::schema();
    assert_eq!(
        property_names(&s),
        ["createdBy", "folder", "priority", "tags", "text"]
    );
    assert!(s.get("additionalProperties").is_none());
}

#[derive(Serialize, Deserialize, JsonSchema, Default)]
#[serde(default)]
struct AllDefault {
    a: String,
    b: u32,
}

#[test]
fn a_default_on_the_type_makes_every_field_optional() {
    let s = AllDefault::schema();
    assert!(s.get("required").is_none(), "{s}");
    fits::<AllDefault>(&json!({}));
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Closed {
    a: String,
}

#[test]
fn deny_unknown_fields_closes_the_object() {
    assert_eq!(Closed::schema()["additionalProperties"], false);
    fits::<Closed>(&json!({"a": "x"}));
    refused::<Closed>(&json!({"a": "x", "b": 1}));
    // And serde agrees.
    assert!(serde_json::from_value::<Closed>(json!({"a": "x", "b": 1})).is_err());
}

macro_rules! field_case {
    ($name:ident, $style:literal, $expect:literal) => {
        #[derive(Serialize, Deserialize, JsonSchema, Default)]
        #[serde(rename_all = $style)]
        struct $name {
            user_id_no: u8,
            r#type: u8,
        }
    };
}
field_case!(FLower, "lowercase", "user_id_no");
field_case!(FUpper, "UPPERCASE", "USER_ID_NO");
field_case!(FPascal, "PascalCase", "UserIdNo");
field_case!(FCamel, "camelCase", "userIdNo");
field_case!(FSnake, "snake_case", "user_id_no");
field_case!(FScreaming, "SCREAMING_SNAKE_CASE", "USER_ID_NO");
field_case!(FKebab, "kebab-case", "user-id-no");
field_case!(FScreamingKebab, "SCREAMING-KEBAB-CASE", "USER-ID-NO");

#[test]
fn rename_all_names_fields_as_serde_does_in_every_style() {
    fn check<T: JsonSchema + Serialize + Default>(expect: &str) {
        let s = T::schema();
        assert_eq!(property_names(&s), serde_names(&T::default()));
        assert!(property_names(&s).iter().any(|n| n == expect), "{s}");
    }
    check::<FLower>("user_id_no");
    check::<FUpper>("USER_ID_NO");
    check::<FPascal>("UserIdNo");
    check::<FCamel>("userIdNo");
    check::<FSnake>("user_id_no");
    check::<FScreaming>("USER_ID_NO");
    check::<FKebab>("user-id-no");
    check::<FScreamingKebab>("USER-ID-NO");
    // Raw identifiers lose their `r#`.
    assert!(FPascal::schema()["properties"].get("Type").is_some());
}

macro_rules! variant_case {
    ($name:ident, $style:literal) => {
        #[derive(Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = $style)]
        enum $name {
            HttpGetRequest,
            Ok,
        }
    };
}
variant_case!(VLower, "lowercase");
variant_case!(VUpper, "UPPERCASE");
variant_case!(VPascal, "PascalCase");
variant_case!(VCamel, "camelCase");
variant_case!(VSnake, "snake_case");
variant_case!(VScreaming, "SCREAMING_SNAKE_CASE");
variant_case!(VKebab, "kebab-case");
variant_case!(VScreamingKebab, "SCREAMING-KEBAB-CASE");

#[test]
fn rename_all_names_variants_as_serde_does_in_every_style() {
    fn check<T: JsonSchema + Serialize>(values: [T; 2], expect: &str) {
        let s = T::schema();
        let written: Vec<Value> = values
            .iter()
            .map(|v| serde_json::to_value(v).unwrap())
            .collect();
        assert_eq!(s["enum"], Value::Array(written), "{s}");
        assert_eq!(s["enum"][0], expect);
    }
    check([VLower::HttpGetRequest, VLower::Ok], "httpgetrequest");
    check([VUpper::HttpGetRequest, VUpper::Ok], "HTTPGETREQUEST");
    check([VPascal::HttpGetRequest, VPascal::Ok], "HttpGetRequest");
    check([VCamel::HttpGetRequest, VCamel::Ok], "httpGetRequest");
    check([VSnake::HttpGetRequest, VSnake::Ok], "http_get_request");
    check(
        [VScreaming::HttpGetRequest, VScreaming::Ok],
        "HTTP_GET_REQUEST",
    );
    check([VKebab::HttpGetRequest, VKebab::Ok], "http-get-request");
    check(
        [VScreamingKebab::HttpGetRequest, VScreamingKebab::Ok],
        "HTTP-GET-REQUEST",
    );
}

// ---------------------------------------------------------------- nested types and std types

/// Where a note is kept.
#[derive(Serialize, Deserialize, JsonSchema, Clone)]
struct Place {
    /// The city.
    city: String,
    zip: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Nested {
    /// Home, inline.
    home: Place,
    places: Vec<Place>,
    by_name: HashMap<String, Place>,
    counts: BTreeMap<String, u64>,
    small: u8,
    big: u64,
    signed: i64,
    ratio: f64,
    flag: bool,
    anything: Value,
}

#[test]
fn nested_types_are_inlined_with_their_own_required_and_descriptions() {
    let s = Nested::schema();
    let home = &s["properties"]["home"];
    assert_eq!(home["type"], "object");
    // The field's doc comment wins over the type's.
    assert_eq!(home["description"], "Home, inline.");
    assert_eq!(home["required"], json!(["city"]));
    assert_eq!(home["properties"]["city"]["description"], "The city.");
    assert_eq!(s["properties"]["places"]["type"], "array");
    assert_eq!(
        s["properties"]["places"]["items"]["description"],
        "Where a note is kept."
    );
    assert_eq!(
        s["properties"]["by_name"]["additionalProperties"]["required"],
        json!(["city"])
    );
    assert_eq!(
        s["properties"]["counts"],
        json!({"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}})
    );
    assert!(s.get("$defs").is_none());
}

#[test]
fn std_types_have_their_json_shapes() {
    let s = Nested::schema();
    let p = &s["properties"];
    assert_eq!(
        p["small"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    assert_eq!(p["big"], json!({"type": "integer", "minimum": 0}));
    assert_eq!(p["signed"], json!({"type": "integer"}));
    assert_eq!(p["ratio"], json!({"type": "number"}));
    assert_eq!(p["flag"], json!({"type": "boolean"}));
    assert_eq!(p["anything"], json!({}));
    assert_eq!(
        <Option<String>>::schema(),
        json!({"type": ["string", "null"]})
    );
    assert_eq!(
        i8::schema(),
        json!({"type": "integer", "minimum": -128, "maximum": 127})
    );
    let value = json!({
        "home": {"city": "Oslo"},
        "places": [{"city": "Bergen", "zip": "5003"}],
        "by_name": {"x": {"city": "Rome", "zip": null}},
        "counts": {"a": 1},
        "small": 255, "big": 1u64 << 60, "signed": -5, "ratio": 0.5, "flag": true,
        "anything": [1, "two"]
    });
    fits::<Nested>(&value);
    assert!(serde_json::from_value::<Nested>(value.clone()).is_ok());
    let mut bad = value;
    bad["places"][0]["city"] = json!(5);
    bad["small"] = json!(-1);
    let err = validate(&Nested::schema(), &bad).unwrap_err().to_string();
    assert!(err.contains("places[0].city: expected string"), "{err}");
    assert!(err.contains("small:"), "{err}");
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Paging {
    cursor: Option<String>,
    limit: u32,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Search {
    query: String,
    #[serde(flatten)]
    paging: Paging,
    #[serde(flatten)]
    extra: HashMap<String, i32>,
}

#[test]
fn flatten_merges_members_and_a_flattened_map_takes_the_rest() {
    let s = Search::schema();
    assert_eq!(property_names(&s), ["cursor", "limit", "query"]);
    assert_eq!(s["required"], json!(["query", "limit"]));
    assert_eq!(
        s["additionalProperties"],
        json!({"type": "integer", "minimum": -2147483648, "maximum": 2147483647})
    );
    let v = serde_json::to_value(Search {
        query: "q".into(),
        paging: Paging {
            cursor: None,
            limit: 5,
        },
        extra: HashMap::from([("boost".into(), 2)]),
    })
    .unwrap();
    fits::<Search>(&v);
    refused::<Search>(&json!({"query": "q"}));
    refused::<Search>(&json!({"query": "q", "limit": 1, "boost": "high"}));
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Pair(String, u8);

#[derive(Serialize, Deserialize, JsonSchema)]
/// An identifier.
struct Id(String);

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
struct Wrapped {
    inner: Vec<u8>,
}

#[test]
fn tuple_newtype_and_transparent_structs_are_their_json_forms() {
    assert_eq!(
        Pair::schema(),
        json!({"type": "array", "prefixItems": [{"type": "string"},
              {"type": "integer", "minimum": 0, "maximum": 255}], "minItems": 2, "maxItems": 2})
    );
    fits::<Pair>(&serde_json::to_value(Pair("a".into(), 1)).unwrap());
    assert_eq!(
        Id::schema(),
        json!({"type": "string", "description": "An identifier."})
    );
    assert_eq!(Wrapped::schema()["type"], "array");
    fits::<Wrapped>(&serde_json::to_value(Wrapped { inner: vec![1] }).unwrap());
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Page<T> {
    items: Vec<T>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

#[test]
fn generic_and_recursive_types() {
    assert_eq!(
        Page::<u8>::schema()["properties"]["items"]["items"]["maximum"],
        255
    );
    assert_eq!(
        Page::<String>::schema()["properties"]["items"]["items"]["type"],
        "string"
    );
    // The recursive member is inlined once, then left open instead of looping.
    let s = Tree::schema();
    assert_eq!(s["properties"]["children"]["items"], json!({}));
    fits::<Tree>(&json!({"label": "a", "children": [{"label": "b", "children": []}]}));
}

// ---------------------------------------------------------------- enums, each representation

/// A color.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    #[serde(rename = "verde")]
    Green,
    #[serde(skip)]
    #[allow(dead_code)]
    Hidden,
}

#[test]
fn unit_enums_are_string_enums() {
    assert_eq!(
        Color::schema(),
        json!({"type": "string", "enum": ["red", "verde"], "description": "A color."})
    );
    refused::<Color>(&json!("hidden"));
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all_fields = "camelCase")]
enum External {
    /// Nothing.
    Empty,
    /// A number.
    Number(i64),
    Point(i32, i32),
    Move {
        dx_total: i32,
        #[serde(default)]
        dy_total: i32,
    },
}

#[test]
fn externally_tagged_enums_are_one_of_their_variants() {
    let s = External::schema();
    let arms = s["oneOf"].as_array().unwrap();
    assert_eq!(arms.len(), 4);
    assert_eq!(
        arms[0],
        json!({"type": "string", "const": "Empty", "description": "Nothing."})
    );
    assert_eq!(arms[1]["required"], json!(["Number"]));
    assert_eq!(arms[1]["description"], "A number.");
    assert_eq!(
        arms[3]["properties"]["Move"]["required"],
        json!(["dxTotal"])
    );
    for v in [
        External::Empty,
        External::Number(3),
        External::Point(1, 2),
        External::Move {
            dx_total: 1,
            dy_total: 2,
        },
    ] {
        fits::<External>(&serde_json::to_value(v).unwrap());
    }
    refused::<External>(&json!({"Number": 1, "Point": [1, 2]}));
    refused::<External>(&json!("Nothing"));
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Internal {
    Ping,
    /// Say something.
    Say {
        text: String,
    },
    Place(Place),
}

#[test]
fn internally_tagged_enums_carry_the_tag_in_each_variant() {
    let s = Internal::schema();
    let arms = s["oneOf"].as_array().unwrap();
    assert_eq!(arms[0]["properties"]["kind"]["const"], "ping");
    assert_eq!(arms[1]["required"], json!(["kind", "text"]));
    assert_eq!(arms[1]["description"], "Say something.");
    assert_eq!(arms[2]["required"], json!(["kind", "city"]));
    for v in [
        Internal::Ping,
        Internal::Say { text: "hi".into() },
        Internal::Place(Place {
            city: "Oslo".into(),
            zip: None,
        }),
    ] {
        fits::<Internal>(&serde_json::to_value(v).unwrap());
    }
    refused::<Internal>(&json!({"kind": "say"}));
    refused::<Internal>(&json!({"kind": "shout", "text": "x"}));
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Unit,
    Num(u8),
    Pair(u8, u8),
    Named { a: String },
}

#[test]
fn adjacently_tagged_enums_have_tag_and_content() {
    let s = Adjacent::schema();
    let arms = s["oneOf"].as_array().unwrap();
    assert_eq!(arms[0]["required"], json!(["t"]));
    assert_eq!(arms[1]["required"], json!(["t", "c"]));
    for v in [
        Adjacent::Unit,
        Adjacent::Num(1),
        Adjacent::Pair(1, 2),
        Adjacent::Named { a: "x".into() },
    ] {
        fits::<Adjacent>(&serde_json::to_value(v).unwrap());
    }
    refused::<Adjacent>(&json!({"t": "Num", "c": "one"}));
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    Short { x: i32 },
    Long { x: i32, y: Option<i32> },
    Text(String),
    Nothing,
}

#[test]
fn untagged_enums_are_any_of_so_overlapping_variants_still_fit() {
    let s = Untagged::schema();
    assert_eq!(s["anyOf"].as_array().unwrap().len(), 4);
    // `{"x": 1}` fits both Short and Long; serde takes Short. `oneOf` would refuse it.
    fits::<Untagged>(&json!({"x": 1}));
    fits::<Untagged>(&serde_json::to_value(Untagged::Long { x: 1, y: Some(2) }).unwrap());
    fits::<Untagged>(&json!("text"));
    fits::<Untagged>(&json!(null));
    refused::<Untagged>(&json!(5));
}

// ---------------------------------------------------------------- tools and structured output

/// Add a note.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // Only its schema and `text` are read.
#[serde(deny_unknown_fields)]
struct AddNote {
    /// The note's text.
    text: String,
    /// Where it was written.
    place: Option<Place>,
    /// How urgent.
    #[serde(default)]
    color: Option<Color>,
}

/// What the notes server knows.
#[derive(Serialize, JsonSchema)]
struct Stats {
    /// Notes kept.
    count: u32,
    /// Their texts.
    texts: Vec<String>,
}

fn notes_server() -> Server {
    Server::builder("notes", "1")
        .tool(
            Tool::typed("add_note", |a: AddNote, _: &Context| {
                Ok::<_, Error>(format!("added {}", a.text))
            })
            .description("Adds a note"),
        )
        .tool(Tool::typed("stats", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(Structured(Stats {
                count: 2,
                texts: vec!["a".into(), "b".into()],
            }))
        }))
        .build()
        .unwrap()
}

fn listed(p: &Peer) -> Vec<Value> {
    let r = p.request(1, "tools/list", json!({}));
    r["result"]["tools"].as_array().unwrap().clone()
}

#[test]
fn tools_list_shows_the_derived_schemas() {
    let p = Peer::open(&notes_server());
    p.initialize("2025-11-25", json!({}));
    let tools = listed(&p);
    let add = tools.iter().find(|t| t["name"] == "add_note").unwrap();
    let input = &add["inputSchema"];
    assert_eq!(input["type"], "object");
    assert_eq!(input["required"], json!(["text"]));
    assert_eq!(input["additionalProperties"], false);
    assert_eq!(
        input["properties"]["text"]["description"],
        "The note's text."
    );
    assert_eq!(
        input["properties"]["place"]["type"],
        json!(["object", "null"])
    );
    assert_eq!(input["properties"]["place"]["required"], json!(["city"]));
    assert_eq!(
        input["properties"]["color"]["anyOf"][0]["enum"],
        json!(["red", "verde"])
    );
    assert!(add.get("outputSchema").is_none());
    let stats = tools.iter().find(|t| t["name"] == "stats").unwrap();
    assert_eq!(
        stats["inputSchema"],
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(stats["outputSchema"]["required"], json!(["count", "texts"]));
    assert_eq!(
        stats["outputSchema"]["properties"]["count"]["description"],
        "Notes kept."
    );
}

#[test]
fn derived_schemas_check_arguments_naming_the_field() {
    let p = Peer::open(&notes_server());
    p.initialize("2025-11-25", json!({}));
    let call = |args: Value| {
        let r = p.request(
            2,
            "tools/call",
            json!({"name": "add_note", "arguments": args}),
        );
        (
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned(),
            r["result"]["isError"] == true,
        )
    };
    assert_eq!(call(json!({"text": "milk"})), ("added milk".into(), false));
    let (text, err) = call(json!({"text": "milk", "place": {"city": 5}}));
    assert!(
        err && text.contains("place.city: expected string"),
        "{text}"
    );
    let (text, err) = call(json!({"place": null}));
    assert!(err && text.contains("text:"), "{text}");
    let (text, err) = call(json!({"text": "x", "color": "blue"}));
    assert!(err && text.contains("color"), "{text}");
}

#[test]
fn a_structured_result_fits_its_output_schema_and_repeats_as_text() {
    let p = Peer::open(&notes_server());
    p.initialize("2025-11-25", json!({}));
    let schema = listed(&p)
        .into_iter()
        .find(|t| t["name"] == "stats")
        .unwrap()["outputSchema"]
        .clone();
    let r = p.request(3, "tools/call", json!({"name": "stats", "arguments": {}}));
    let structured = &r["result"]["structuredContent"];
    assert_eq!(structured, &json!({"count": 2, "texts": ["a", "b"]}));
    validate(&schema, structured).unwrap();
    let text: Value =
        serde_json::from_str(r["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, structured);
}

#[test]
fn older_clients_get_the_text_and_no_output_schema() {
    let p = Peer::open(&notes_server());
    p.initialize("2025-03-26", json!({}));
    let stats = listed(&p)
        .into_iter()
        .find(|t| t["name"] == "stats")
        .unwrap();
    assert!(stats.get("outputSchema").is_none(), "{stats}");
    let r = p.request(3, "tools/call", json!({"name": "stats", "arguments": {}}));
    assert!(r["result"].get("structuredContent").is_none(), "{r}");
    let text: Value =
        serde_json::from_str(r["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, json!({"count": 2, "texts": ["a", "b"]}));
}

#[test]
fn a_hand_written_schema_overrides_the_derived_one() {
    let tool = Tool::typed("t", |a: AddNote, _: &Context| Ok::<_, Error>(a.text))
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}));
    assert!(tool.definition().input_schema.get("required").is_none());
    let plain = Tool::new("t", |a: AddNote, _: &Context| Ok::<_, Error>(a.text));
    assert!(
        plain.definition().input_schema["properties"]
            .as_object()
            .unwrap()
            .is_empty()
    );
}

/// A result whose hand-written schema disagrees with what it writes.
#[derive(Serialize)]
struct Liar {
    count: String,
}

impl JsonSchema for Liar {
    fn schema() -> Value {
        json!({"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]})
    }
}

#[test]
fn debug_builds_turn_a_result_that_misses_its_schema_into_a_tool_error() {
    let server = Server::builder("t", "1")
        .tool(Tool::new("liar", |_: NoArgs, _: &Context| {
            Ok::<_, Error>(Structured(Liar {
                count: "two".into(),
            }))
        }))
        .build()
        .unwrap();
    let p = Peer::open(&server);
    p.initialize("2025-11-25", json!({}));
    let r = p.request(4, "tools/call", json!({"name": "liar", "arguments": {}}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("outputSchema") && text.contains("count: expected integer"),
        "{text}"
    );
}
