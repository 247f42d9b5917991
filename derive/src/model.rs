//! The input, parsed once: the container, its fields or variants, and the serde
//! attributes the derive honours. Every attribute it does not honour is an error
//! spanned at the attribute's name; the errors of one input are combined.

use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, ExprPath, Fields, Generics, Ident, LitStr, Member, Type};

/// Serialization-only attributes: they have no meaning when deserializing, so they
/// are accepted (a struct usually derives `Serialize` with the same attributes).
const SERIALIZE_ONLY: &[&str] = &["skip_serializing", "skip_serializing_if", "serialize_with"];

pub struct Container {
    pub ident: Ident,
    pub generics: Generics,
    /// The name given to the deserializer (`rename`).
    pub name: String,
    pub deny_unknown_fields: bool,
    pub default: Default,
    pub body: Body,
    /// `#[onewayalloc(arena = Type)]`: the arena type the value deserializes into,
    /// `OneWayAlloc` when absent.
    pub arena: Option<Type>,
}

pub enum Body {
    Struct(Style, Vec<Field>),
    Enum(Vec<Variant>),
}

#[derive(Clone, Copy, PartialEq)]
pub enum Style {
    Named,
    Tuple,
    Newtype,
    Unit,
}

#[derive(Clone)]
pub enum Default {
    None,
    /// `#[serde(default)]`: `Default::default()`.
    Trait,
    /// `#[serde(default = "path")]`: `path()`.
    Path(ExprPath),
}

pub struct Field {
    pub member: Member,
    pub ty: Type,
    /// The name in the input, then its aliases.
    pub names: Vec<String>,
    pub skip: bool,
    pub default: Default,
}

pub struct Variant {
    pub ident: Ident,
    pub names: Vec<String>,
    pub skip: bool,
    pub style: Style,
    pub fields: Vec<Field>,
}

/// Collects errors so that every one of them is reported, not only the first.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Position {
    Container,
    Field,
    Variant,
}

impl Position {
    fn name(self) -> &'static str {
        match self {
            Position::Container => "a struct or enum",
            Position::Field => "a field",
            Position::Variant => "a variant",
        }
    }

    fn allows(self, attribute: &str) -> bool {
        match self {
            Position::Container => {
                matches!(
                    attribute,
                    "rename" | "rename_all" | "deny_unknown_fields" | "default"
                )
            }
            Position::Field => {
                matches!(
                    attribute,
                    "rename" | "alias" | "default" | "skip" | "skip_deserializing"
                ) || SERIALIZE_ONLY.contains(&attribute)
            }
            Position::Variant => {
                matches!(
                    attribute,
                    "rename" | "alias" | "rename_all" | "skip" | "skip_deserializing"
                ) || matches!(attribute, "skip_serializing" | "serialize_with")
            }
        }
    }
}

/// The serde attributes of one item, as written.
#[derive(Default)]
struct Attrs {
    rename: Option<String>,
    rename_all: Option<RenameRule>,
    aliases: Vec<String>,
    deny_unknown_fields: bool,
    skip: bool,
    default: Option<Default>,
}

fn parse_attrs(attrs: &[Attribute], position: Position, errors: &mut Errors) -> Attrs {
    let mut out = Attrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result = attr.parse_nested_meta(|meta| {
            let Some(ident) = meta.path.get_ident() else {
                return Err(meta.error("expected a serde attribute name"));
            };
            let name = ident.to_string();
            if !position.allows(&name) {
                // Consume its value, so the attributes after it are checked too.
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                } else if meta.input.peek(syn::token::Paren) {
                    let _content;
                    syn::parenthesized!(_content in meta.input);
                }
                let known = Position::Container.allows(&name)
                    || Position::Field.allows(&name)
                    || Position::Variant.allows(&name);
                errors.push(syn::Error::new_spanned(
                    &meta.path,
                    if known {
                        format!(
                            "`#[derive(DeserializeIn)]`: the serde attribute `{name}` is not supported on {}",
                            position.name()
                        )
                    } else {
                        format!(
                            "`#[derive(DeserializeIn)]` does not support the serde attribute `{name}`"
                        )
                    },
                ));
                return Ok(());
            }
            match name.as_str() {
                "rename" => {
                    if let Some(s) = deserialize_name(&meta)? {
                        out.rename = Some(s.value());
                    }
                }
                "rename_all" => {
                    if let Some(s) = deserialize_name(&meta)? {
                        match RenameRule::from_str(&s.value()) {
                            Some(rule) => out.rename_all = Some(rule),
                            None => errors.push(syn::Error::new_spanned(
                                &s,
                                format!("unknown rename rule `{}`", s.value()),
                            )),
                        }
                    }
                }
                "alias" => out.aliases.push(meta.value()?.parse::<LitStr>()?.value()),
                "deny_unknown_fields" => out.deny_unknown_fields = true,
                "skip" | "skip_deserializing" => out.skip = true,
                "default" => {
                    out.default = Some(if meta.input.peek(syn::Token![=]) {
                        let path: LitStr = meta.value()?.parse()?;
                        Default::Path(path.parse()?)
                    } else {
                        Default::Trait
                    });
                }
                _ => {
                    // Serialization only: its value is read and dropped.
                    if meta.input.peek(syn::Token![=]) {
                        meta.value()?.parse::<syn::Expr>()?;
                    }
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    out
}

/// `rename = "x"` or `rename(deserialize = "x", serialize = "y")`: the name to
/// deserialize, if one is given.
fn deserialize_name(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(syn::Token![=]) {
        return Ok(Some(meta.value()?.parse()?));
    }
    let mut name = None;
    meta.parse_nested_meta(|inner| {
        let value: LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("deserialize") {
            name = Some(value);
        } else if !inner.path.is_ident("serialize") {
            return Err(inner.error("expected `serialize` or `deserialize`"));
        }
        Ok(())
    })?;
    Ok(name)
}

fn fields(fields: &Fields, rule: Option<RenameRule>, errors: &mut Errors) -> (Style, Vec<Field>) {
    let style = match fields {
        Fields::Named(_) => Style::Named,
        Fields::Unnamed(f) if f.unnamed.len() == 1 => Style::Newtype,
        Fields::Unnamed(_) => Style::Tuple,
        Fields::Unit => Style::Unit,
    };
    let list = fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let attrs = parse_attrs(&field.attrs, Position::Field, errors);
            misplaced_arena_attr(&field.attrs, "a field", errors);
            let (member, plain) = match &field.ident {
                Some(ident) => {
                    let plain = ident.unraw().to_string();
                    (Member::Named(ident.clone()), plain)
                }
                None => (Member::Unnamed(syn::Index::from(i)), i.to_string()),
            };
            let name = attrs
                .rename
                .unwrap_or_else(|| rule.map_or(plain.clone(), |r| r.apply_to_field(&plain)));
            let mut names = vec![name];
            names.extend(attrs.aliases);
            Field {
                member,
                ty: field.ty.clone(),
                names,
                skip: attrs.skip,
                default: attrs.default.unwrap_or(Default::None),
            }
        })
        .collect();
    (style, list)
}

impl Container {
    pub fn parse(input: &DeriveInput) -> syn::Result<Container> {
        let mut errors = Errors::default();
        let attrs = parse_attrs(&input.attrs, Position::Container, &mut errors);
        let arena = arena_attr(&input.attrs, &mut errors);
        let body = match &input.data {
            Data::Struct(data) => {
                let (style, list) = fields(&data.fields, attrs.rename_all, &mut errors);
                Body::Struct(style, list)
            }
            Data::Enum(data) => {
                if let Some(Default::Trait | Default::Path(_)) = attrs.default {
                    errors.push(syn::Error::new(
                        input.ident.span(),
                        "`#[serde(default)]` applies to structs only",
                    ));
                }
                let variants = data
                    .variants
                    .iter()
                    .map(|variant| {
                        let vattrs = parse_attrs(&variant.attrs, Position::Variant, &mut errors);
                        misplaced_arena_attr(&variant.attrs, "a variant", &mut errors);
                        let plain = variant.ident.unraw().to_string();
                        let name = vattrs.rename.unwrap_or_else(|| {
                            attrs
                                .rename_all
                                .map_or(plain.clone(), |r| r.apply_to_variant(&plain))
                        });
                        let mut names = vec![name];
                        names.extend(vattrs.aliases);
                        let (style, list) = fields(&variant.fields, vattrs.rename_all, &mut errors);
                        Variant {
                            ident: variant.ident.clone(),
                            names,
                            skip: vattrs.skip,
                            style,
                            fields: list,
                        }
                    })
                    .collect();
                Body::Enum(variants)
            }
            Data::Union(data) => {
                errors.push(syn::Error::new(
                    data.union_token.span(),
                    "`#[derive(DeserializeIn)]` does not support unions",
                ));
                Body::Enum(Vec::new())
            }
        };
        errors.finish()?;
        Ok(Container {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            name: attrs
                .rename
                .unwrap_or_else(|| input.ident.unraw().to_string()),
            deny_unknown_fields: attrs.deny_unknown_fields,
            default: attrs.default.unwrap_or(Default::None),
            body,
            arena,
        })
    }
}

/// The container's `#[onewayalloc(arena = Type)]`, if any: one `arena` key, once.
fn arena_attr(attrs: &[Attribute], errors: &mut Errors) -> Option<Type> {
    let mut arena: Option<Type> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("onewayalloc")) {
        let result = attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident("arena") {
                return Err(meta.error(
                    "`#[onewayalloc(...)]` takes one key, `arena`: `#[onewayalloc(arena = onewayalloc::SyncOneWayAlloc)]`",
                ));
            }
            let ty: Type = meta.value()?.parse()?;
            if arena.is_some() {
                errors.push(syn::Error::new_spanned(
                    &meta.path,
                    "`#[onewayalloc(arena = ...)]` is given twice",
                ));
            } else {
                arena = Some(ty);
            }
            Ok(())
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    arena
}

/// An error for `#[onewayalloc(...)]` on a field or variant: the arena is the
/// container's.
fn misplaced_arena_attr(attrs: &[Attribute], place: &str, errors: &mut Errors) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("onewayalloc")) {
        errors.push(syn::Error::new_spanned(
            attr.path(),
            format!(
                "`#[onewayalloc(arena = ...)]` applies to the struct or enum, not to {place}: every field lives in the container's arena"
            ),
        ));
    }
}

/// serde's `rename_all` rules, applied as serde applies them.
#[derive(Clone, Copy)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    fn from_str(s: &str) -> Option<RenameRule> {
        Some(match s {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// A variant name, written in PascalCase.
    fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_lowercase().to_string() + chars.as_str()
                })
            }
            RenameRule::Snake => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }

    /// A field name, written in snake_case.
    fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                let mut chars = pascal.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_lowercase().to_string() + chars.as_str()
                })
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule;

    /// serde's own table (serde_derive's `case.rs` tests).
    #[test]
    fn rename_rules_match_serde() {
        let rules = [
            "lowercase",
            "UPPERCASE",
            "PascalCase",
            "camelCase",
            "snake_case",
            "SCREAMING_SNAKE_CASE",
            "kebab-case",
            "SCREAMING-KEBAB-CASE",
        ]
        .map(|r| RenameRule::from_str(r).unwrap());
        let variants: [(&str, [&str; 8]); 3] = [
            (
                "Outcome",
                [
                    "outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME", "outcome",
                    "OUTCOME",
                ],
            ),
            (
                "VeryTasty",
                [
                    "verytasty",
                    "VERYTASTY",
                    "VeryTasty",
                    "veryTasty",
                    "very_tasty",
                    "VERY_TASTY",
                    "very-tasty",
                    "VERY-TASTY",
                ],
            ),
            ("A", ["a", "A", "A", "a", "a", "A", "a", "A"]),
        ];
        check(&rules, &variants, RenameRule::apply_to_variant);
        let fields: [(&str, [&str; 8]); 3] = [
            (
                "outcome",
                [
                    "outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME", "outcome",
                    "OUTCOME",
                ],
            ),
            (
                "very_tasty",
                [
                    "very_tasty",
                    "VERY_TASTY",
                    "VeryTasty",
                    "veryTasty",
                    "very_tasty",
                    "VERY_TASTY",
                    "very-tasty",
                    "VERY-TASTY",
                ],
            ),
            ("a", ["a", "A", "A", "a", "a", "A", "a", "A"]),
        ];
        check(&rules, &fields, RenameRule::apply_to_field);
    }

    fn check(
        rules: &[RenameRule],
        table: &[(&str, [&str; 8])],
        apply: fn(RenameRule, &str) -> String,
    ) {
        for (original, expected) in table {
            for (rule, want) in rules.iter().zip(expected) {
                assert_eq!(apply(*rule, original), *want, "{original}");
            }
        }
    }
}
