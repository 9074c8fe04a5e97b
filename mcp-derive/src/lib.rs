//! `#[derive(JsonSchema)]` for `mcp-server-kit`: a type's JSON Schema (2020-12), read from the
//! same declaration serde reads, so a tool's published schema cannot drift from what its handler
//! accepts. And `#[tool]`, which makes a plain function a tool, its parameters the members of
//! a struct this derive describes (see [`macro@tool`]).
//!
//! Use it through the kit (`mcp_server_kit::schema::JsonSchema`, default feature `derive`); the
//! generated code names `::mcp_server_kit`, so the kit must be a dependency under that name.
//! The derive only writes a call per field and per variant into the kit's small runtime
//! helpers (`mcp_server_kit::schema::__private`): the rules live in one place, as ordinary
//! code, and the macro stays small enough to build in a second on top of the syn that
//! `serde_derive` already builds.
//!
//! What it reads:
//! - doc comments (on the type, fields and variants) become `description`;
//! - serde's `rename`, `rename_all`, `rename_all_fields`, `skip`, `skip_deserializing`,
//!   `default`, `flatten`, `transparent`, `deny_unknown_fields`, `tag`, `content` and
//!   `untagged`; every other serde attribute is left to serde. Where serialize and deserialize
//!   names differ (`rename(serialize = .., deserialize = ..)`), the schema follows deserialize:
//!   tool arguments are what it describes first.
//!
//! A field is required unless serde can do without it: `#[serde(default)]` (on the field or
//! the type), or a type that reads a missing member as empty (`Option<T>`, through
//! `JsonSchema::may_be_absent`). `skip_serializing_if` changes nothing there: it says when the
//! field is written, not whether it may be left out of the input.
#![deny(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens, TokenTree};
use quote::quote;
use syn::parse::ParseStream;
use syn::{
    Attribute, Data, DeriveInput, Expr, ExprLit, Fields, GenericParam, Lit, LitStr, Meta, Token,
    Type, parse_macro_input,
};

mod tool;

/// Makes a plain function an MCP tool: the function stays as written, and `NAME_tool()` beside
/// it builds the `mcp_server_kit::Tool` that calls it.
///
/// Its parameters are the tool's arguments (each type `Deserialize` and `JsonSchema`; an
/// `Option` may be left out), except one of type `&Context`, which receives the handler's
/// context. The doc comment is the tool's description, a parameter's doc comment (or
/// `#[arg(description = "...")]`) its argument's. It returns anything a tool handler may
/// (text, numbers, `Structured`, a full result), or a `Result` of one whose error converts
/// into the kit's `Error`. `#[tool(name = "...", description = "...")]` overrides the name
/// (the function's by default) and the description. Not supported: generics, `self`,
/// patterns as parameters, `async`.
///
/// Use it through the kit (`mcp_server_kit::tool`, default feature `derive`); see the
/// kit's documentation for an example.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut settings = tool::ToolArgs::default();
    let parser = settings.parser();
    parse_macro_input!(args with parser);
    match tool::expand(settings, item.into()) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Derives `mcp_server_kit::schema::JsonSchema` for a struct or an enum, following its serde
/// attributes (see the crate documentation for the list).
#[proc_macro_derive(JsonSchema, attributes(serde))]
pub fn derive_json_schema(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The serde attributes this derive reads, from one type, field or variant.
#[derive(Default)]
struct SerdeAttrs {
    rename: Option<String>,
    rename_all: Option<Case>,
    rename_all_fields: Option<Case>,
    skip: bool,
    default: bool,
    flatten: bool,
    transparent: bool,
    deny_unknown_fields: bool,
    tag: Option<String>,
    content: Option<String>,
    untagged: bool,
}

/// serde's `rename_all` styles.
#[derive(Clone, Copy)]
enum Case {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl Case {
    fn parse(s: &LitStr) -> syn::Result<Case> {
        Ok(match s.value().as_str() {
            "lowercase" => Case::Lower,
            "UPPERCASE" => Case::Upper,
            "PascalCase" => Case::Pascal,
            "camelCase" => Case::Camel,
            "snake_case" => Case::Snake,
            "SCREAMING_SNAKE_CASE" => Case::ScreamingSnake,
            "kebab-case" => Case::Kebab,
            "SCREAMING-KEBAB-CASE" => Case::ScreamingKebab,
            other => {
                return Err(syn::Error::new(
                    s.span(),
                    format!("unknown rename rule `{other}`"),
                ));
            }
        })
    }

    /// A field name (written in snake_case in Rust) in this style, as serde spells it.
    fn field(self, name: &str) -> String {
        match self {
            Case::Lower | Case::Snake => name.to_owned(),
            Case::Upper | Case::ScreamingSnake => name.to_ascii_uppercase(),
            Case::Pascal => {
                let mut out = String::new();
                let mut upper = true;
                for c in name.chars() {
                    if c == '_' {
                        upper = true;
                    } else if upper {
                        out.push(c.to_ascii_uppercase());
                        upper = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            Case::Camel => lower_first(&Case::Pascal.field(name)),
            Case::Kebab => name.replace('_', "-"),
            Case::ScreamingKebab => name.replace('_', "-").to_ascii_uppercase(),
        }
    }

    /// A variant name (written in PascalCase in Rust) in this style, as serde spells it.
    fn variant(self, name: &str) -> String {
        match self {
            Case::Lower => name.to_ascii_lowercase(),
            Case::Upper => name.to_ascii_uppercase(),
            Case::Pascal => name.to_owned(),
            Case::Camel => lower_first(name),
            Case::Snake => {
                let mut out = String::new();
                for (i, c) in name.char_indices() {
                    if i > 0 && c.is_uppercase() {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                }
                out
            }
            Case::ScreamingSnake => Case::Snake.variant(name).to_ascii_uppercase(),
            Case::Kebab => Case::Snake.variant(name).replace('_', "-"),
            Case::ScreamingKebab => Case::ScreamingSnake.variant(name).replace('_', "-"),
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// Reads a `= "value"` or a `(serialize = "..", deserialize = "..")` (the deserialize one
/// wins; serialize alone leaves the deserialize name as it was, so it yields nothing).
fn name_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(Token![=]) {
        return Ok(Some(meta.value()?.parse()?));
    }
    let mut found = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("deserialize") {
            found = Some(inner.value()?.parse()?);
        } else {
            skip_value(inner.input)?;
        }
        Ok(())
    })?;
    Ok(found)
}

/// Skips whatever follows a serde key this derive does not read, up to the next comma.
fn skip_value(input: ParseStream) -> syn::Result<()> {
    while !input.is_empty() && !input.peek(Token![,]) {
        input.parse::<TokenTree>()?;
    }
    Ok(())
}

fn serde_attrs(attrs: &[Attribute]) -> syn::Result<SerdeAttrs> {
    let mut out = SerdeAttrs::default();
    for attr in attrs {
        if !attr.path().is_ident("serde") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            let p = &meta.path;
            if p.is_ident("rename") {
                if let Some(s) = name_value(&meta)? {
                    out.rename = Some(s.value());
                }
            } else if p.is_ident("rename_all") {
                if let Some(s) = name_value(&meta)? {
                    out.rename_all = Some(Case::parse(&s)?);
                }
            } else if p.is_ident("rename_all_fields") {
                if let Some(s) = name_value(&meta)? {
                    out.rename_all_fields = Some(Case::parse(&s)?);
                }
            } else if p.is_ident("skip") || p.is_ident("skip_deserializing") {
                out.skip = true;
            } else if p.is_ident("default") {
                out.default = true;
                skip_value(meta.input)?;
            } else if p.is_ident("flatten") {
                out.flatten = true;
            } else if p.is_ident("transparent") {
                out.transparent = true;
            } else if p.is_ident("deny_unknown_fields") {
                out.deny_unknown_fields = true;
            } else if p.is_ident("untagged") {
                out.untagged = true;
            } else if p.is_ident("tag") {
                out.tag = Some(meta.value()?.parse::<LitStr>()?.value());
            } else if p.is_ident("content") {
                out.content = Some(meta.value()?.parse::<LitStr>()?.value());
            } else {
                skip_value(meta.input)?;
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// The doc comment, with its lines joined into paragraphs (wrapped source lines are one
/// sentence to a reader of the schema), or `None` when there is none.
fn doc_of(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta {
            if nv.path.is_ident("doc") {
                if let Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) = &nv.value
                {
                    lines.push(s.value());
                }
            }
        }
    }
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in &lines {
        let line = line.trim();
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}

fn opt_str(s: &Option<String>) -> Tokens {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

fn ident_name(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let attrs = serde_attrs(&input.attrs)?;
    let body = match &input.data {
        Data::Struct(s) => struct_body(&s.fields, &attrs, attrs.rename_all, &doc_of(&input.attrs))?,
        Data::Enum(e) => enum_body(e, &attrs, &doc_of(&input.attrs))?,
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span,
                "JsonSchema cannot be derived for a union",
            ));
        }
    };
    let name = &input.ident;
    let mut generics = input.generics.clone();
    let params: Vec<_> = generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(t.ident.clone()),
            _ => None,
        })
        .collect();
    {
        let wc = generics.make_where_clause();
        for p in params {
            wc.predicates
                .push(syn::parse_quote!(#p: ::mcp_server_kit::schema::JsonSchema));
        }
    }
    let (impl_g, ty_g, where_c) = generics.split_for_impl();
    Ok(quote! {
        #[automatically_derived]
        impl #impl_g ::mcp_server_kit::schema::JsonSchema for #name #ty_g #where_c {
            fn schema() -> ::mcp_server_kit::schema::__private::Value {
                ::mcp_server_kit::schema::__private::guard::<Self>(|| { #body })
            }
        }
    })
}

fn schema_of(ty: &Type) -> Tokens {
    quote!(<#ty as ::mcp_server_kit::schema::JsonSchema>::schema())
}

/// The schema of a struct's (or a variant's) fields. `case` renames named fields; `tag`, for
/// an internally tagged variant, adds the tag member first.
fn struct_body(
    fields: &Fields,
    attrs: &SerdeAttrs,
    case: Option<Case>,
    doc: &Option<String>,
) -> syn::Result<Tokens> {
    fields_body(fields, attrs, case, doc, None)
}

fn fields_body(
    fields: &Fields,
    attrs: &SerdeAttrs,
    case: Option<Case>,
    doc: &Option<String>,
    tag: Option<(&str, &str)>,
) -> syn::Result<Tokens> {
    let p = quote!(::mcp_server_kit::schema::__private);
    let doc_t = opt_str(doc);
    let deny = attrs.deny_unknown_fields;
    match fields {
        Fields::Named(named) => {
            let mut steps = Vec::new();
            if let Some((tag, value)) = tag {
                steps.push(quote!(o.field(#tag, #p::constant(#value), ::core::option::Option::None, true);));
            }
            let live: Vec<_> = named
                .named
                .iter()
                .map(|f| Ok((f, serde_attrs(&f.attrs)?)))
                .collect::<syn::Result<Vec<_>>>()?
                .into_iter()
                .filter(|(_, a)| !a.skip)
                .collect();
            if attrs.transparent {
                if let [(f, _)] = live.as_slice() {
                    let s = schema_of(&f.ty);
                    return Ok(quote!(#p::describe(#s, #doc_t)));
                }
            }
            for (f, fa) in live {
                let ty = &f.ty;
                let s = schema_of(ty);
                let may_be_absent =
                    quote!(<#ty as ::mcp_server_kit::schema::JsonSchema>::may_be_absent());
                if fa.flatten {
                    steps.push(quote!(o.flatten(#s, #may_be_absent);));
                    continue;
                }
                let ident = f.ident.as_ref().map(ident_name).unwrap_or_default();
                let name = match (&fa.rename, case) {
                    (Some(r), _) => r.clone(),
                    (None, Some(c)) => c.field(&ident),
                    (None, None) => ident,
                };
                let fdoc = opt_str(&doc_of(&f.attrs));
                let required = if fa.default || attrs.default {
                    quote!(false)
                } else {
                    quote!(!#may_be_absent)
                };
                steps.push(quote!(o.field(#name, #s, #fdoc, #required);));
            }
            Ok(quote! {
                let mut o = #p::Object::new();
                #(#steps)*
                o.finish(#doc_t, #deny)
            })
        }
        Fields::Unnamed(unnamed) => {
            let live: Vec<_> = unnamed
                .unnamed
                .iter()
                .map(|f| Ok((f, serde_attrs(&f.attrs)?)))
                .collect::<syn::Result<Vec<_>>>()?
                .into_iter()
                .filter(|(_, a)| !a.skip)
                .collect();
            if unnamed.unnamed.len() == 1 && live.len() == 1 {
                // A newtype is its inner value in serde's data model.
                let s = schema_of(&live[0].0.ty);
                return Ok(quote!(#p::describe(#s, #doc_t)));
            }
            let items: Vec<_> = live.iter().map(|(f, _)| schema_of(&f.ty)).collect();
            Ok(quote!(#p::describe(#p::tuple(::std::vec![#(#items),*]), #doc_t)))
        }
        Fields::Unit => Ok(quote!(#p::describe(#p::null(), #doc_t))),
    }
}

/// How an enum is represented, from its container attributes.
enum Repr<'a> {
    External,
    Internal(&'a str),
    Adjacent(&'a str, &'a str),
    Untagged,
}

fn enum_body(e: &syn::DataEnum, attrs: &SerdeAttrs, doc: &Option<String>) -> syn::Result<Tokens> {
    let p = quote!(::mcp_server_kit::schema::__private);
    let repr = match (&attrs.tag, &attrs.content, attrs.untagged) {
        (_, _, true) => Repr::Untagged,
        (Some(t), Some(c), _) => Repr::Adjacent(t, c),
        (Some(t), None, _) => Repr::Internal(t),
        (None, Some(_), _) => {
            return Err(syn::Error::new(
                Span::call_site(),
                "serde's `content` needs `tag`",
            ));
        }
        (None, None, _) => Repr::External,
    };
    let doc_t = opt_str(doc);
    let mut variants = Vec::new();
    for v in &e.variants {
        let va = serde_attrs(&v.attrs)?;
        if va.skip {
            continue;
        }
        let name = match (&va.rename, attrs.rename_all) {
            (Some(r), _) => r.clone(),
            (None, Some(c)) => c.variant(&ident_name(&v.ident)),
            (None, None) => ident_name(&v.ident),
        };
        variants.push((v, va, name));
    }
    // Only unit variants, externally tagged: a plain string enum.
    if matches!(repr, Repr::External)
        && variants
            .iter()
            .all(|(v, _, _)| matches!(v.fields, Fields::Unit))
    {
        let names: Vec<_> = variants.iter().map(|(_, _, n)| n).collect();
        return Ok(quote!(#p::describe(#p::string_enum(&[#(#names),*]), #doc_t)));
    }
    let mut arms = Vec::new();
    for (v, va, name) in &variants {
        let vdoc = doc_of(&v.attrs);
        let vdoc_t = opt_str(&vdoc);
        let case = va.rename_all.or(attrs.rename_all_fields);
        // The variant's own fields; deny_unknown_fields of the enum applies to them.
        let field_attrs = SerdeAttrs {
            deny_unknown_fields: attrs.deny_unknown_fields,
            ..SerdeAttrs::default()
        };
        let unit = matches!(v.fields, Fields::Unit);
        let arm = match repr {
            Repr::External => {
                if unit {
                    quote!(#p::describe(#p::constant(#name), #vdoc_t))
                } else {
                    let body = fields_body(&v.fields, &field_attrs, case, &None, None)?;
                    quote!(#p::external(#name, { #body }, #vdoc_t))
                }
            }
            Repr::Internal(tag) => match &v.fields {
                Fields::Named(_) | Fields::Unit => {
                    let fields = if unit {
                        Fields::Named(syn::parse_quote!({}))
                    } else {
                        v.fields.clone()
                    };
                    let b = fields_body(&fields, &field_attrs, case, &vdoc, Some((tag, name)))?;
                    quote!({ #b })
                }
                Fields::Unnamed(_) => {
                    let body = fields_body(&v.fields, &field_attrs, case, &None, None)?;
                    quote!(#p::internal_newtype(#tag, #name, { #body }, #vdoc_t))
                }
            },
            Repr::Adjacent(tag, content) => {
                let body = if unit {
                    quote!(::core::option::Option::None)
                } else {
                    let b = fields_body(&v.fields, &field_attrs, case, &None, None)?;
                    quote!(::core::option::Option::Some({ #b }))
                };
                quote!(#p::adjacent(#tag, #content, #name, #body, #vdoc_t))
            }
            Repr::Untagged => {
                let b = fields_body(&v.fields, &field_attrs, case, &vdoc, None)?;
                quote!({ #b })
            }
        };
        arms.push(arm);
    }
    Ok(match repr {
        // serde takes the first untagged variant that fits, so a value may fit several.
        Repr::Untagged => quote!(#p::describe(#p::any_of(::std::vec![#(#arms),*]), #doc_t)),
        _ => quote!(#p::describe(#p::one_of(::std::vec![#(#arms),*]), #doc_t)),
    })
}
