//! The code generated from the model.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{GenericParam, Generics, Ident, Lifetime, LifetimeParam, Type, parse_quote};

use crate::model::{Body, Container, Default, Field, Style, Variant};

/// The generics every generated item carries: the container's, with the arena
/// lifetime `'__arena` first (outliving each of the container's lifetimes) and every
/// type parameter bound by `DeserializeIn<'__arena, Arena>`.
struct Ctx {
    /// The arena type: `#[onewayalloc(arena = ...)]`, else `OneWayAlloc`.
    arena: TokenStream,
    /// `impl<...>` of the trait and the visitors, and the visitors' type arguments.
    generics: Generics,
    /// The same with `'__de` first, for the `Visitor<'__de>` impls.
    de_generics: Generics,
    /// The container type: `Name<'a, T>`.
    ty: TokenStream,
    /// `Name`, for struct and variant paths.
    ident: Ident,
}

/// The seed of a field of type `fty` in the visitor's arena, spanned at the field's
/// type, so that a field typed for another arena is the error's place.
fn seed_of(fty: &Type) -> TokenStream {
    quote_spanned!(fty.span()=> ::onewayalloc::serde::ArenaSeed::<#fty, _>::new(self.arena))
}

fn private() -> TokenStream {
    quote!(::onewayalloc::serde::__private)
}

fn de() -> TokenStream {
    quote!(::onewayalloc::serde::__private::serde::de)
}

pub fn expand(c: &Container) -> TokenStream {
    let arena_ty = match &c.arena {
        Some(ty) => quote!(#ty),
        None => quote!(::onewayalloc::OneWayAlloc),
    };
    let mut generics = c.generics.clone();
    let lifetimes: Vec<Lifetime> = generics.lifetimes().map(|l| l.lifetime.clone()).collect();
    for param in generics.type_params_mut() {
        param
            .bounds
            .push(parse_quote!(::onewayalloc::serde::DeserializeIn<'__arena, #arena_ty>));
    }
    let mut arena: LifetimeParam = parse_quote!('__arena);
    arena.bounds.extend(lifetimes);
    if !arena.bounds.is_empty() {
        arena.colon_token = Some(<syn::Token![:]>::default());
    }
    generics.params.insert(0, GenericParam::Lifetime(arena));
    let mut de_generics = generics.clone();
    de_generics.params.insert(0, parse_quote!('__de));
    let ident = c.ident.clone();
    let (_, ty_generics, _) = c.generics.split_for_impl();
    let ctx = Ctx {
        arena: arena_ty,
        generics,
        de_generics,
        ty: quote!(#ident #ty_generics),
        ident,
    };

    let name = &c.name;
    let body = match &c.body {
        Body::Struct(style, fields) => {
            let de = de();
            let path = quote!(#name);
            let construct = {
                let ident = &ctx.ident;
                quote!(#ident)
            };
            let container_default = match &c.default {
                Default::None => None,
                Default::Trait => Some(quote!(::core::default::Default::default())),
                Default::Path(p) => Some(quote!(#p())),
            };
            struct_like(
                &ctx,
                *style,
                fields,
                &construct,
                c.deny_unknown_fields,
                container_default.as_ref(),
                &format!("struct {}", c.ident),
                &|visitor: TokenStream, names: TokenStream, len: usize| match style {
                    Style::Named => {
                        quote!(#de::Deserializer::deserialize_struct(__deserializer, #path, #names, #visitor))
                    }
                    Style::Tuple => {
                        quote!(#de::Deserializer::deserialize_tuple_struct(__deserializer, #path, #len, #visitor))
                    }
                    Style::Newtype => {
                        quote!(#de::Deserializer::deserialize_newtype_struct(__deserializer, #path, #visitor))
                    }
                    Style::Unit => {
                        quote!(#de::Deserializer::deserialize_unit_struct(__deserializer, #path, #visitor))
                    }
                },
            )
        }
        Body::Enum(variants) => enum_body(&ctx, c, variants),
    };

    let (impl_generics, _, where_clause) = ctx.generics.split_for_impl();
    let ty = &ctx.ty;
    let arena_ty = &ctx.arena;
    let private = private();
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, unused, clippy::all, clippy::pedantic)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::onewayalloc::serde::DeserializeIn<'__arena, #arena_ty> for #ty #where_clause {
                #[inline]
                fn deserialize_in<'__de, __D: #private::serde::Deserializer<'__de>>(
                    __deserializer: __D,
                    __arena: &'__arena #arena_ty,
                ) -> #private::Result<Self, __D::Error> {
                    #body
                }
            }
        };
    }
}

/// `struct __Visitor<...> { arena, marker }` and the head of its `Visitor` impl.
fn visitor_struct(ctx: &Ctx) -> (TokenStream, TokenStream) {
    let private = private();
    let (impl_generics, ty_generics, where_clause) = ctx.generics.split_for_impl();
    let (de_impl_generics, _, _) = ctx.de_generics.split_for_impl();
    let ty = &ctx.ty;
    let arena_ty = &ctx.arena;
    let def = quote! {
        struct __Visitor #impl_generics #where_clause {
            arena: &'__arena #arena_ty,
            marker: #private::PhantomData<fn() -> #ty>,
        }
    };
    let head = quote! {
        impl #de_impl_generics #private::serde::de::Visitor<'__de> for __Visitor #ty_generics #where_clause
    };
    (def, head)
}

/// The value of a field that the input does not give, when there is one: its own
/// default, else the container's.
fn default_value(field: &Field, container_default: bool) -> Option<TokenStream> {
    match &field.default {
        Default::Trait => Some(quote!(::core::default::Default::default())),
        Default::Path(p) => Some(quote!(#p())),
        Default::None if container_default => {
            let member = &field.member;
            Some(quote!(__default.#member))
        }
        Default::None => None,
    }
}

fn skipped_value(field: &Field, container_default: bool) -> TokenStream {
    default_value(field, container_default)
        .unwrap_or_else(|| quote!(::core::default::Default::default()))
}

/// The code of a struct or struct-like variant: the visitor and the call that
/// `call(visitor, FIELDS, len)` makes of it.
#[allow(clippy::too_many_arguments)]
fn struct_like(
    ctx: &Ctx,
    style: Style,
    fields: &[Field],
    construct: &TokenStream,
    deny_unknown_fields: bool,
    container_default: Option<&TokenStream>,
    expecting: &str,
    call: &dyn Fn(TokenStream, TokenStream, usize) -> TokenStream,
) -> TokenStream {
    let de = de();
    let private = private();
    let (def, head) = visitor_struct(ctx);
    let ty = &ctx.ty;
    let has_default = container_default.is_some();
    let default_binding = container_default.map(|expr| quote!(let __default: #ty = #expr;));

    // visit_seq: the fields in order (compact formats, tuple structs and variants).
    let mut seq_lets = Vec::new();
    let mut seq_members = Vec::new();
    let mut index = 0usize;
    for (i, field) in fields.iter().enumerate() {
        let var = format_ident!("__v{}", i);
        let member = &field.member;
        let fty = &field.ty;
        let seed = seed_of(fty);
        seq_members.push(quote!(#member: #var));
        if field.skip {
            let value = skipped_value(field, has_default);
            seq_lets.push(quote!(let #var = #value;));
            continue;
        }
        // `&#expecting`, the message of `&self` (the visitor's `expecting`), without
        // taking the visitor's address: the visitor would need a stack slot in a
        // frame that a recursive type repeats at every nesting level.
        let missing = default_value(field, has_default).unwrap_or_else(
            || quote!(return #private::Result::Err(#de::Error::invalid_length(#index, &#expecting))),
        );
        seq_lets.push(quote! {
            let #var = match #de::SeqAccess::next_element_seed(
                &mut __seq,
                #seed,
            )? {
                #private::Option::Some(__value) => __value,
                #private::Option::None => #missing,
            };
        });
        index += 1;
    }
    let visit_seq = quote! {
        #[inline]
        fn visit_seq<__S: #de::SeqAccess<'__de>>(self, mut __seq: __S)
            -> #private::Result<Self::Value, __S::Error>
        {
            #default_binding
            #(#seq_lets)*
            #private::Result::Ok(#construct { #(#seq_members),* })
        }
    };

    let (extra, names, visit_rest) = match style {
        Style::Named => {
            let (ident_code, names, visit_map) = named_fields(
                fields,
                construct,
                deny_unknown_fields,
                default_binding.as_ref(),
                has_default,
            );
            (ident_code, names, visit_map)
        }
        Style::Newtype => {
            let fty = &fields[0].ty;
            let visit = quote! {
                #[inline]
                fn visit_newtype_struct<__E: #de::Deserializer<'__de>>(self, __e: __E)
                    -> #private::Result<Self::Value, __E::Error>
                {
                    let __v0 = <#fty as ::onewayalloc::serde::DeserializeIn<'__arena, _>>::deserialize_in(__e, self.arena)?;
                    #private::Result::Ok(#construct { 0: __v0 })
                }
            };
            (quote!(), quote!(&[]), visit)
        }
        Style::Tuple => (quote!(), quote!(&[]), quote!()),
        Style::Unit => {
            let visit = quote! {
                fn visit_unit<__E: #de::Error>(self) -> #private::Result<Self::Value, __E> {
                    #private::Result::Ok(#construct)
                }
            };
            (quote!(), quote!(&[]), visit)
        }
    };
    let visit_seq = if style == Style::Unit {
        quote!()
    } else {
        visit_seq
    };
    let call = call(
        quote!(__Visitor { arena: __arena, marker: #private::PhantomData }),
        quote!(__FIELDS),
        fields.len(),
    );
    quote! {
        #extra
        const __FIELDS: &[&str] = #names;
        #def
        #head {
            type Value = #ty;
            fn expecting(&self, __f: &mut #private::fmt::Formatter<'_>) -> #private::fmt::Result {
                __f.write_str(#expecting)
            }
            #visit_seq
            #visit_rest
        }
        #call
    }
}

/// The field identifier (`__Field` and its visitor), `FIELDS`, and `visit_map`.
fn named_fields(
    fields: &[Field],
    construct: &TokenStream,
    deny_unknown_fields: bool,
    default_binding: Option<&TokenStream>,
    has_default: bool,
) -> (TokenStream, TokenStream, TokenStream) {
    let de = de();
    let private = private();
    let active: Vec<(usize, &Field)> = fields.iter().enumerate().filter(|(_, f)| !f.skip).collect();
    let tags: Vec<Ident> = active
        .iter()
        .map(|(i, _)| format_ident!("__f{}", i))
        .collect();
    let all_names: Vec<&String> = active.iter().flat_map(|(_, f)| &f.names).collect();
    let (unknown_str, unknown_bytes, unknown_index) = if deny_unknown_fields {
        (
            quote!(#private::Result::Err(#de::Error::unknown_field(__value, __FIELDS))),
            quote!(#private::Result::Err(#de::Error::unknown_field(&#private::lossy(__value), __FIELDS))),
            {
                let count = tags.len();
                quote!(#private::Result::Err(#private::variant_index_error(__value, #count)))
            },
        )
    } else {
        let ignore = quote!(#private::Result::Ok(__Field::__ignore));
        (ignore.clone(), ignore.clone(), ignore)
    };
    let ident_code = identifier(
        &format_ident!("__Field"),
        "a field identifier",
        &tags,
        &active.iter().map(|(_, f)| &f.names[..]).collect::<Vec<_>>(),
        Some(format_ident!("__ignore")),
        [unknown_str, unknown_bytes, unknown_index],
    );
    let names = quote!(&[#(#all_names),*]);

    let decls = active.iter().map(|(i, f)| {
        let var = format_ident!("__v{}", i);
        let fty = &f.ty;
        quote!(let mut #var: #private::Option<#fty> = #private::Option::None;)
    });
    let arms = active.iter().zip(&tags).map(|((i, f), tag)| {
        let var = format_ident!("__v{}", i);
        let fty = &f.ty;
        let seed = seed_of(fty);
        let name = &f.names[0];
        quote! {
            __Field::#tag => {
                if #private::Option::is_some(&#var) {
                    return #private::Result::Err(<__M::Error as #de::Error>::duplicate_field(#name));
                }
                #var = #private::Option::Some(#de::MapAccess::next_value_seed(
                    &mut __map,
                    #seed,
                )?);
            }
        }
    });
    let finals = fields.iter().enumerate().map(|(i, f)| {
        let var = format_ident!("__v{}", i);
        let fty = &f.ty;
        if f.skip {
            let value = skipped_value(f, has_default);
            return quote!(let #var: #fty = #value;);
        }
        let name = &f.names[0];
        let missing = default_value(f, has_default).unwrap_or_else(
            || quote!(#private::missing_field::<#fty, __M::Error, _>(#name, self.arena)?),
        );
        quote! {
            let #var: #fty = match #var {
                #private::Option::Some(__value) => __value,
                #private::Option::None => #missing,
            };
        }
    });
    let members = fields.iter().enumerate().map(|(i, f)| {
        let var = format_ident!("__v{}", i);
        let member = &f.member;
        quote!(#member: #var)
    });
    let visit_map = quote! {
        #[inline]
        fn visit_map<__M: #de::MapAccess<'__de>>(self, mut __map: __M)
            -> #private::Result<Self::Value, __M::Error>
        {
            #(#decls)*
            while let #private::Option::Some(__key) =
                #de::MapAccess::next_key::<__Field>(&mut __map)?
            {
                match __key {
                    #(#arms)*
                    __Field::__ignore => {
                        #de::MapAccess::next_value::<#de::IgnoredAny>(&mut __map)?;
                    }
                }
            }
            #default_binding
            #(#finals)*
            #private::Result::Ok(#construct { #(#members),* })
        }
    };
    (ident_code, names, visit_map)
}

fn enum_body(ctx: &Ctx, c: &Container, variants: &[Variant]) -> TokenStream {
    let de = de();
    let private = private();
    let ident = &ctx.ident;
    let name = &c.name;
    let active: Vec<&Variant> = variants.iter().filter(|v| !v.skip).collect();
    let tags: Vec<Ident> = (0..active.len())
        .map(|i| format_ident!("__v{}", i))
        .collect();
    let all_names: Vec<&String> = active.iter().flat_map(|v| &v.names).collect();
    let count = tags.len();

    let arms = active.iter().zip(&tags).map(|(v, tag)| {
        let vident = &v.ident;
        let construct = quote!(#ident::#vident);
        let body = match v.style {
            Style::Unit => quote! {
                #de::VariantAccess::unit_variant(__variant)?;
                #private::Result::Ok(#construct)
            },
            Style::Newtype => {
                let fty = &v.fields[0].ty;
                let seed = seed_of(fty);
                quote! {
                    #private::Result::map(
                        #de::VariantAccess::newtype_variant_seed(
                            __variant,
                            #seed,
                        ),
                        #construct,
                    )
                }
            }
            Style::Tuple | Style::Named => {
                let style = v.style;
                let expecting = format!(
                    "{} variant {}::{}",
                    if style == Style::Named {
                        "struct"
                    } else {
                        "tuple"
                    },
                    c.ident,
                    vident
                );
                struct_like(
                    ctx,
                    style,
                    &v.fields,
                    &construct,
                    c.deny_unknown_fields,
                    None,
                    &expecting,
                    &|visitor: TokenStream, names: TokenStream, len: usize| {
                        let visitor = quote!({ let __arena = self.arena; #visitor });
                        if style == Style::Named {
                            quote!(#de::VariantAccess::struct_variant(__variant, #names, #visitor))
                        } else {
                            quote!(#de::VariantAccess::tuple_variant(__variant, #len, #visitor))
                        }
                    },
                )
            }
        };
        quote!((__Variant::#tag, __variant) => { #body })
    });

    let match_variants = if active.is_empty() {
        quote! {
            let (__tag, _) = #de::EnumAccess::variant::<__Variant>(__data)?;
            match __tag {}
        }
    } else {
        quote! {
            match #de::EnumAccess::variant::<__Variant>(__data)? {
                #(#arms)*
            }
        }
    };
    let ident_code = identifier(
        &format_ident!("__Variant"),
        "a variant identifier",
        &tags,
        &active.iter().map(|v| &v.names[..]).collect::<Vec<_>>(),
        None,
        [
            quote!(#private::Result::Err(#de::Error::unknown_variant(__value, __VARIANTS))),
            quote!(#private::Result::Err(#de::Error::unknown_variant(&#private::lossy(__value), __VARIANTS))),
            quote!(#private::Result::Err(#private::variant_index_error(__value, #count))),
        ],
    );
    let (def, head) = visitor_struct(ctx);
    let ty = &ctx.ty;
    let expecting = format!("enum {}", c.ident);
    quote! {
        #ident_code
        const __VARIANTS: &[&str] = &[#(#all_names),*];
        #def
        #head {
            type Value = #ty;
            fn expecting(&self, __f: &mut #private::fmt::Formatter<'_>) -> #private::fmt::Result {
                __f.write_str(#expecting)
            }
            #[inline]
            fn visit_enum<__A: #de::EnumAccess<'__de>>(self, __data: __A)
                -> #private::Result<Self::Value, __A::Error>
            {
                #match_variants
            }
        }
        #de::Deserializer::deserialize_enum(__deserializer, #name, __VARIANTS, __Visitor { arena: __arena, marker: #private::PhantomData })
    }
}

/// An identifier enum (`__Field` or `__Variant`), its visitor and its
/// `Deserialize`: a name, its bytes or its index gives the tag; anything else gives
/// `unknown` (for a `&str`, a `&[u8]` and an index, in that order).
fn identifier(
    kind: &Ident,
    expecting: &str,
    tags: &[Ident],
    names: &[&[String]],
    extra: Option<Ident>,
    unknown: [TokenStream; 3],
) -> TokenStream {
    let de = de();
    let private = private();
    let [unknown_str, unknown_bytes, unknown_index] = unknown;
    let visitor = format_ident!("{}Visitor", kind);
    let str_arms = names
        .iter()
        .zip(tags)
        .map(|(names, tag)| quote!(#(#names)|* => #private::Result::Ok(#kind::#tag),));
    let byte_arms = names.iter().zip(tags).map(|(names, tag)| {
        let names = names
            .iter()
            .map(|n| syn::LitByteStr::new(n.as_bytes(), proc_macro2::Span::call_site()));
        quote!(#(#names)|* => #private::Result::Ok(#kind::#tag),)
    });
    let index_arms = tags.iter().enumerate().map(|(i, tag)| {
        let i = i as u64;
        quote!(#i => #private::Result::Ok(#kind::#tag),)
    });
    quote! {
        enum #kind { #(#tags,)* #extra }
        struct #visitor;
        impl<'__de> #de::Visitor<'__de> for #visitor {
            type Value = #kind;
            fn expecting(&self, __f: &mut #private::fmt::Formatter<'_>) -> #private::fmt::Result {
                __f.write_str(#expecting)
            }
            fn visit_u64<__E: #de::Error>(self, __value: u64) -> #private::Result<#kind, __E> {
                match __value { #(#index_arms)* _ => #unknown_index }
            }
            fn visit_str<__E: #de::Error>(self, __value: &str) -> #private::Result<#kind, __E> {
                match __value { #(#str_arms)* _ => #unknown_str }
            }
            fn visit_bytes<__E: #de::Error>(self, __value: &[u8]) -> #private::Result<#kind, __E> {
                match __value { #(#byte_arms)* _ => #unknown_bytes }
            }
        }
        impl<'__de> #de::Deserialize<'__de> for #kind {
            fn deserialize<__D: #de::Deserializer<'__de>>(__d: __D) -> #private::Result<Self, __D::Error> {
                #de::Deserializer::deserialize_identifier(__d, #visitor)
            }
        }
    }
}
