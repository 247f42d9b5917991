//! `#[derive(DeserializeIn)]` for [onewayalloc](https://docs.rs/onewayalloc): use it
//! through the main crate's `derive` feature, as `onewayalloc::DeserializeIn`.
//!
//! The input is parsed once into a model (`model.rs`: the container, its fields or
//! variants and the serde attributes honoured), every unsupported attribute being an
//! error spanned at its name; the code is then generated from the model (`expand.rs`),
//! in serde_derive's shape: an identifier enum for the field or variant names and a
//! `Visitor` per struct or variant, each field deserialized through
//! `onewayalloc::serde::ArenaSeed` so that it lands in the arena.

mod expand;
mod model;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `onewayalloc::serde::DeserializeIn`: see that trait, and the main crate's
/// `serde` module for the attributes honoured.
///
/// The value deserializes into a `OneWayAlloc`. For a value whose strings and
/// collections live in a `SyncOneWayAlloc` (the `onewayalloc::collections::sync`
/// types), name that arena with `#[onewayalloc(arena = onewayalloc::SyncOneWayAlloc)]`
/// on the struct or enum, and call `SyncOneWayAlloc::deserialize`.
///
/// ```
/// use onewayalloc::collections::Vec;
/// use onewayalloc::{DeserializeIn, OneWayAlloc};
///
/// #[derive(DeserializeIn)]
/// #[serde(rename_all = "camelCase")]
/// struct Query<'a> {
///     chart_id: &'a str,
///     dimensions: Vec<'a, &'a str>,
/// }
///
/// let arena = OneWayAlloc::new();
/// let mut json = serde_json::Deserializer::from_str(r#"{"chartId":"cpu","dimensions":["user"]}"#);
/// let query: Query = arena.deserialize(&mut json).unwrap();
/// assert_eq!((query.chart_id, query.dimensions.len()), ("cpu", 1));
/// ```
#[proc_macro_derive(DeserializeIn, attributes(serde, onewayalloc))]
pub fn derive_deserialize_in(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match model::Container::parse(&input) {
        Ok(container) => expand::expand(&container).into(),
        Err(errors) => errors.to_compile_error().into(),
    }
}
