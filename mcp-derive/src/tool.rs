//! `#[tool]`: a plain function as an MCP tool.
//!
//! The function stays as written (callable, testable); beside it comes `NAME_tool()`, which
//! builds the kit's `Tool`: the parameters become the members of a generated argument struct
//! (deriving serde's `Deserialize` and our `JsonSchema`, so the schema is the derive's), the
//! function's doc comment the tool's description, a parameter's doc comment (or
//! `#[arg(description = "...")]`) its member's.
//!
//! The function is read with syn's derive-level parsers (attributes, visibility, types) and a
//! few tokens by hand, not syn's `full` feature: that feature would compile syn again with
//! twice the code, for the one item shape read here.

use proc_macro2::{Delimiter, Group, Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Ident, LitStr, Token, Type, Visibility};

use crate::doc_of;

/// `#[tool(...)]`'s own settings.
#[derive(Default)]
pub(crate) struct ToolArgs {
    name: Option<LitStr>,
    description: Option<LitStr>,
}

impl ToolArgs {
    pub(crate) fn parser(&mut self) -> impl syn::parse::Parser<Output = ()> + '_ {
        syn::meta::parser(move |meta| {
            if meta.path.is_ident("name") {
                self.name = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("description") {
                self.description = Some(meta.value()?.parse()?);
            } else {
                return Err(
                    meta.error("#[tool] takes `name = \"...\"` and `description = \"...\"`")
                );
            }
            Ok(())
        })
    }
}

/// One parameter: `[attrs] [mut] name: Type`.
struct Param {
    attrs: Vec<Attribute>,
    mutability: Option<Token![mut]>,
    name: Ident,
    ty: Type,
}

/// The function `#[tool]` is on.
struct ToolFn {
    attrs: Vec<Attribute>,
    vis: Visibility,
    name: Ident,
    params: Vec<Param>,
    ret: Option<Type>,
    body: Group,
}

impl Parse for ToolFn {
    fn parse(input: ParseStream) -> syn::Result<ToolFn> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        if !input.peek(Token![fn]) {
            return Err(
                input.error("#[tool] goes on a plain `fn` (not const, async, unsafe or extern)")
            );
        }
        input.parse::<Token![fn]>()?;
        let name: Ident = input.parse()?;
        if input.peek(Token![<]) {
            return Err(input.error("a #[tool] function cannot be generic: its arguments are read from JSON as one concrete type"));
        }
        let content;
        syn::parenthesized!(content in input);
        let mut params = Vec::new();
        while !content.is_empty() {
            let attrs = content.call(Attribute::parse_outer)?;
            if content.peek(Token![self]) || content.peek(Token![&]) {
                return Err(content.error("a #[tool] function takes no `self`"));
            }
            let mutability = content.parse()?;
            let name: Ident = content.parse().map_err(|e| {
                syn::Error::new(e.span(), "a #[tool] parameter is a plain name (no pattern)")
            })?;
            content.parse::<Token![:]>()?;
            let ty: Type = content.parse()?;
            params.push(Param {
                attrs,
                mutability,
                name,
                ty,
            });
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        let ret = if input.peek(Token![->]) {
            input.parse::<Token![->]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        if input.peek(Token![where]) {
            return Err(input.error("a #[tool] function has no `where` clause"));
        }
        let body: Group = input.parse()?;
        if body.delimiter() != Delimiter::Brace {
            return Err(syn::Error::new(body.span(), "expected the function's body"));
        }
        Ok(ToolFn {
            attrs,
            vis,
            name,
            params,
            ret,
            body,
        })
    }
}

/// Whether `ty` is `&Context` (by its last path segment): that parameter gets the handler's
/// context instead of an argument.
fn is_context(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
            Type::Path(p) => {
                p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Context")
            }
            _ => false,
        },
        _ => false,
    }
}

/// Whether `ty` is a `Result` (by its last path segment, so `io::Result<T>` counts).
fn is_result(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Result"),
        _ => false,
    }
}

/// A parameter's description: `#[arg(description = "...")]`, else its doc comment.
fn arg_description(attrs: &[Attribute]) -> syn::Result<Option<String>> {
    for attr in attrs {
        if attr.path().is_ident("arg") {
            let mut found = None;
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("description") {
                    found = Some(meta.value()?.parse::<LitStr>()?.value());
                    Ok(())
                } else {
                    Err(meta.error("#[arg] takes `description = \"...\"`"))
                }
            })?;
            return Ok(found);
        }
    }
    Ok(doc_of(attrs))
}

pub(crate) fn expand(args: ToolArgs, item: Tokens) -> syn::Result<Tokens> {
    let f: ToolFn = syn::parse2(item)?;
    let (attrs, vis, name, body) = (&f.attrs, &f.vis, &f.name, &f.body);
    let tool_name = args
        .name
        .unwrap_or_else(|| LitStr::new(&name.to_string(), name.span()));
    let description = match args.description {
        Some(d) => Some(d.value()),
        None => doc_of(attrs),
    };
    let describe = description.map(|d| quote!(.description(#d)));

    let mut kept = Vec::new();
    let mut fields = Vec::new();
    let mut members = Vec::new();
    let mut call = Vec::new();
    let ctx = Ident::new("__mcp_context", Span::mixed_site());
    for p in &f.params {
        let Param {
            attrs,
            mutability,
            name: pname,
            ty,
        } = p;
        // The parameter's own attributes go; doc comments and `#[arg]` describe the member.
        let own: Vec<&Attribute> = (attrs.iter())
            .filter(|a| !a.path().is_ident("arg") && !a.path().is_ident("doc"))
            .collect();
        kept.push(quote!(#(#own)* #mutability #pname: #ty));
        if is_context(ty) {
            call.push(quote!(#ctx));
            continue;
        }
        if let Type::Reference(r) = ty {
            return Err(syn::Error::new(
                r.and_token.span,
                "a #[tool] argument owns its value, read from the call's JSON (`String`, not `&str`); the one borrowed parameter is the context, written `&Context` (by that name, not an alias)",
            ));
        }
        let doc = arg_description(attrs)?.map(|d| quote!(#[doc = #d]));
        fields.push(quote!(#doc #pname: #ty));
        members.push(pname.clone());
        call.push(quote!(#pname));
    }
    let ret_tokens = f.ret.as_ref().map(|t| quote!(-> #t));
    let invoke = quote!(#name(#(#call),*));
    let answer = match &f.ret {
        Some(t) if is_result(t) => quote! {
            match #invoke {
                ::core::result::Result::Ok(v) => ::core::result::Result::Ok(v),
                ::core::result::Result::Err(e) => ::core::result::Result::Err(
                    ::core::convert::Into::<::mcp_server_kit::Error>::into(e),
                ),
            }
        },
        _ => quote!(::core::result::Result::Ok::<_, ::mcp_server_kit::Error>(#invoke)),
    };
    let builder = format_ident!("{}_tool", name);
    let builder_doc = format!(
        "The MCP tool `{}` (made by `#[tool]`): it calls [`{name}`] with the call's arguments.",
        tool_name.value()
    );
    Ok(quote! {
        #(#attrs)*
        #vis fn #name(#(#kept),*) #ret_tokens #body

        #[doc = #builder_doc]
        #vis fn #builder() -> ::mcp_server_kit::Tool {
            #[derive(::mcp_server_kit::__private::serde::Deserialize, ::mcp_server_kit::schema::JsonSchema)]
            #[serde(crate = "::mcp_server_kit::__private::serde")]
            #[allow(non_camel_case_types, non_snake_case)]
            struct __McpArguments { #(#fields),* }
            ::mcp_server_kit::Tool::typed(
                #tool_name,
                |args: __McpArguments, #ctx: &::mcp_server_kit::Context| {
                    let __McpArguments { #(#members),* } = args;
                    #answer
                },
            )
            #describe
        }
    })
}
